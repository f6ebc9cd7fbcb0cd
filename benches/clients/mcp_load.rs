//! A minimal pipelining MCP load client for benches/mcp_bench.sh (std only, built with rustc -O
//! by the script; not a cargo bench target), so that the server, not the client, is measured.
//!
//!   mcp_load stdio CLIENTS CALLS DEPTH TOOL ARGS_JSON -- SERVER_CMD...
//!   mcp_load http  CLIENTS CALLS URL TOKEN TOOL ARGS_JSON [DEPTH]
//!   mcp_load cancel ROUNDS -- SERVER_CMD...
//!
//! stdio: one server process; CLIENTS logical clients share its stdin/stdout, each keeping DEPTH
//! requests in flight (ids say whose), CALLS calls each. http: CLIENTS connections, each with its
//! own session (keep-alive), DEPTH (1) requests pipelined; one thread drives them all in turn,
//! as one thread drives every client over stdio. Every answer is checked for its id, a result
//! that is not `"isError":true`, and (when `MCP_LOAD_EXPECT` is set) that text in it. Prints
//! `calls_per_second=N`, and over stdio
//! `server_cpu_us_per_call=N` (the server process's CPU time from the first call to the last
//! answer, divided by the calls).
//! cancel: a `sleep | sleep` run_command, then `notifications/cancelled` once both sleeps run;
//! the time from sending the cancellation until every process beneath the server is gone
//! (polled in /proc every 100 µs). Prints the median and the worst of ROUNDS.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.get(1).map(String::as_str) {
        Some("stdio") => stdio(&args[2..]),
        Some("http") => http(&args[2..]),
        Some("cancel") => cancel(&args[2..]),
        _ => Err("usage: mcp_load stdio|http|cancel ...".into()),
    };
    if let Err(e) = result {
        eprintln!("mcp_load: {e}");
        std::process::exit(1);
    }
}

type Res<T> = Result<T, String>;

fn num(s: Option<&String>, what: &str) -> Res<usize> {
    s.and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{what}: expected a number"))
}

fn server_cmd(args: &[String]) -> Res<Command> {
    let at = args
        .iter()
        .position(|a| a == "--")
        .ok_or("missing -- SERVER_CMD")?;
    let cmd = args.get(at + 1).ok_or("missing SERVER_CMD")?;
    let mut c = Command::new(cmd);
    c.args(&args[at + 2..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    Ok(c)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp_load","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn call(id: usize, tool: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
    )
}

/// The top-level numeric id of a response line (inside strings quotes are escaped, so a bare
/// `"id":` is a key).
fn id_of(line: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = line[from..].find("\"id\":") {
        let start = from + at;
        if start == 0 || line.as_bytes()[start - 1] != b'\\' {
            let digits: String = line[start + 5..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            return digits.parse().ok();
        }
        from = start + 5;
    }
    None
}

/// A result that is not a tool error (servers may leave out `"isError":false`) and, when
/// `MCP_LOAD_EXPECT` is set, holds that text (a line of the file read: the answer's content is
/// checked, not only its shape).
fn answered_ok(response: &str) -> bool {
    static EXPECT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let expect = EXPECT.get_or_init(|| {
        std::env::var("MCP_LOAD_EXPECT")
            .ok()
            .filter(|e| !e.is_empty())
    });
    response.contains("\"result\":")
        && !response.contains("\"isError\":true")
        && expect
            .as_ref()
            .map_or(true, |e| response.contains(e.as_str()))
}

fn stdio(args: &[String]) -> Res<()> {
    let clients = num(args.first(), "CLIENTS")?;
    let calls = num(args.get(1), "CALLS")?;
    let depth = num(args.get(2), "DEPTH")?;
    let tool = args.get(3).ok_or("TOOL")?;
    let tool_args = args.get(4).ok_or("ARGS_JSON")?;
    let mut child = server_cmd(args)?.spawn().map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().ok_or("stdin")?;
    let mut stdout = BufReader::with_capacity(1 << 20, child.stdout.take().ok_or("stdout")?);
    let mut line = String::new();
    writeln!(stdin, "{INIT}").map_err(|e| e.to_string())?;
    stdin.flush().map_err(|e| e.to_string())?;
    stdout.read_line(&mut line).map_err(|e| e.to_string())?;
    writeln!(stdin, "{INITIALIZED}").map_err(|e| e.to_string())?;
    let server = child.id();
    let cpu_before = cpu_ticks(server);
    // id = client * 1_000_000 + sequence number within the client.
    let mut sent = vec![0usize; clients];
    let mut done = 0usize;
    let total = clients * calls;
    let started = Instant::now();
    let mut batch = String::new();
    for (c, s) in sent.iter_mut().enumerate() {
        for _ in 0..depth.min(calls) {
            batch.push_str(&call(c * 1_000_000 + *s, tool, tool_args));
            batch.push('\n');
            *s += 1;
        }
    }
    stdin
        .write_all(batch.as_bytes())
        .map_err(|e| e.to_string())?;
    stdin.flush().map_err(|e| e.to_string())?;
    while done < total {
        line.clear();
        if stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err(format!("the server closed stdout after {done} answers"));
        }
        let id =
            id_of(&line).ok_or_else(|| format!("no id in {}", &line[..line.len().min(200)]))?;
        if !answered_ok(&line) {
            return Err(format!(
                "call {id} failed: {}",
                &line[..line.len().min(300)]
            ));
        }
        done += 1;
        let c = id / 1_000_000;
        if sent[c] < calls {
            let next = call(c * 1_000_000 + sent[c], tool, tool_args) + "\n";
            sent[c] += 1;
            stdin
                .write_all(next.as_bytes())
                .map_err(|e| e.to_string())?;
            stdin.flush().map_err(|e| e.to_string())?;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_ticks(server)
        .zip(cpu_before)
        .map(|(after, before)| after - before);
    drop(stdin);
    let _ = child.wait();
    println!("calls_per_second={:.0}", total as f64 / secs);
    if let Some(ticks) = cpu {
        // Clock ticks are 10 ms: over thousands of calls, a few per cent.
        let micros = ticks as f64 * 1e6 / CLOCK_TICKS as f64;
        println!("server_cpu_us_per_call={:.1}", micros / total as f64);
    }
    Ok(())
}

/// USER_HZ, the unit of /proc/PID/stat's times (100 on Linux).
const CLOCK_TICKS: u64 = 100;

/// CPU time (user + system) of a process and its threads so far, in clock ticks: the server's
/// own cost per call, which depends less on the machine's load than its rate does.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.get(stat.rfind(')')? + 2..)?.split(' ');
    // After the name: state is field 3; utime and stime are fields 14 and 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
    path: String,
    token: String,
    session: Option<String>,
}

impl Conn {
    fn open(url: &str, token: &str) -> Res<Conn> {
        let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let stream = TcpStream::connect(host).map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Conn {
            reader: BufReader::with_capacity(
                1 << 20,
                stream.try_clone().map_err(|e| e.to_string())?,
            ),
            writer: stream,
            host: host.to_string(),
            path: format!("/{path}"),
            token: token.to_string(),
            session: None,
        })
    }

    /// POST one message; the response's headers (lower-cased) and body.
    fn post(&mut self, body: &str) -> Res<(HashMap<String, String>, String)> {
        self.send(body)?;
        self.receive()
    }

    fn send(&mut self, body: &str) -> Res<()> {
        let mut req = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
             Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n",
            self.path,
            self.host,
            self.token,
            body.len()
        );
        if let Some(s) = &self.session {
            req.push_str(&format!(
                "Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
            ));
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.writer
            .write_all(req.as_bytes())
            .map_err(|e| e.to_string())
    }

    /// The next response on the connection (responses come in request order).
    fn receive(&mut self) -> Res<(HashMap<String, String>, String)> {
        let mut status = String::new();
        self.reader
            .read_line(&mut status)
            .map_err(|e| e.to_string())?;
        let mut headers = HashMap::new();
        loop {
            let mut h = String::new();
            self.reader.read_line(&mut h).map_err(|e| e.to_string())?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        let mut body = Vec::new();
        if let Some(len) = headers
            .get("content-length")
            .and_then(|l| l.parse::<usize>().ok())
        {
            body.resize(len, 0);
            self.reader
                .read_exact(&mut body)
                .map_err(|e| e.to_string())?;
        } else if headers
            .get("transfer-encoding")
            .is_some_and(|t| t.contains("chunked"))
        {
            loop {
                let mut size = String::new();
                self.reader
                    .read_line(&mut size)
                    .map_err(|e| e.to_string())?;
                let n = usize::from_str_radix(size.trim(), 16).map_err(|e| e.to_string())?;
                let mut chunk = vec![0; n + 2];
                self.reader
                    .read_exact(&mut chunk)
                    .map_err(|e| e.to_string())?;
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        }
        if !status.contains(" 200 ") && !status.contains(" 202 ") {
            return Err(format!("HTTP {}", status.trim()));
        }
        Ok((headers, String::from_utf8_lossy(&body).into_owned()))
    }
}

fn http(args: &[String]) -> Res<()> {
    let clients = num(args.first(), "CLIENTS")?;
    let calls = num(args.get(1), "CALLS")?;
    let url = args.get(2).ok_or("URL")?.clone();
    let token = args.get(3).ok_or("TOKEN")?.clone();
    let tool = args.get(4).ok_or("TOOL")?.clone();
    let tool_args = args.get(5).ok_or("ARGS_JSON")?.clone();
    let depth = args.get(6).map_or(Ok(1), |d| num(Some(d), "DEPTH"))?.max(1);
    let mut conns = Vec::new();
    for _ in 0..clients {
        let mut conn = Conn::open(&url, &token)?;
        let (headers, _) = conn.post(INIT)?;
        conn.session = Some(
            headers
                .get("mcp-session-id")
                .ok_or("no session id")?
                .clone(),
        );
        conn.post(INITIALIZED)?;
        conns.push(conn);
    }
    // One thread drives every connection, as over stdio (where one thread drives every logical
    // client): each keeps `depth` requests in flight and its answers are read in turn, so that
    // the client's own thread switches are not what is measured.
    let started = Instant::now();
    let mut sent = vec![0usize; clients];
    let mut answered = vec![0usize; clients];
    for (c, conn) in conns.iter_mut().enumerate() {
        while sent[c] < calls.min(depth) {
            conn.send(&call(sent[c], &tool, &tool_args))?;
            sent[c] += 1;
        }
    }
    let mut left = clients * calls;
    while left > 0 {
        for (c, conn) in conns.iter_mut().enumerate() {
            if answered[c] == sent[c] {
                continue;
            }
            let (_, body) = conn.receive()?;
            let i = answered[c];
            if id_of(&body) != Some(i) || !answered_ok(&body) {
                return Err(format!("call {i} failed: {}", &body[..body.len().min(300)]));
            }
            answered[c] += 1;
            left -= 1;
            if sent[c] < calls {
                conn.send(&call(sent[c], &tool, &tool_args))?;
                sent[c] += 1;
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!("calls_per_second={:.0}", (clients * calls) as f64 / secs);
    Ok(())
}

/// (pid, ppid, state) of every process.
fn table() -> Vec<(i32, i32, char)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let rest = stat.get(stat.rfind(')')? + 2..)?;
            let mut f = rest.split(' ');
            let state = f.next()?.chars().next()?;
            let ppid = f.next()?.parse().ok()?;
            Some((pid, ppid, state))
        })
        .collect()
}

fn alive(pids: &[i32]) -> usize {
    pids.iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| s.get(s.rfind(')')? + 2..)?.chars().next())
                .is_some_and(|state| state != 'Z')
        })
        .count()
}

fn descendants(root: i32) -> Vec<(i32, String)> {
    let t = table();
    let mut out = Vec::new();
    let mut parents = vec![root];
    while let Some(p) = parents.pop() {
        for (pid, ppid, state) in &t {
            if *ppid == p && *state != 'Z' {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                out.push((*pid, comm.trim().to_string()));
                parents.push(*pid);
            }
        }
    }
    out
}

fn cancel(args: &[String]) -> Res<()> {
    let rounds = num(args.first(), "ROUNDS")?;
    let mut child = server_cmd(args)?.spawn().map_err(|e| e.to_string())?;
    let server = child.id() as i32;
    let mut stdin = child.stdin.take().ok_or("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("stdout")?);
    let mut line = String::new();
    writeln!(stdin, "{INIT}\n{INITIALIZED}").map_err(|e| e.to_string())?;
    stdout.read_line(&mut line).map_err(|e| e.to_string())?;
    let mut times = Vec::new();
    for round in 1..=rounds {
        let req = call(
            round,
            "run_command",
            r#"{"command":"sleep 1000 | sleep 1000"}"#,
        );
        writeln!(stdin, "{req}").map_err(|e| e.to_string())?;
        stdin.flush().map_err(|e| e.to_string())?;
        let deadline = Instant::now() + Duration::from_secs(20);
        let tree = loop {
            let d = descendants(server);
            if d.iter().filter(|(_, c)| c == "sleep").count() == 2 {
                break d;
            }
            if Instant::now() > deadline {
                return Err(format!("round {round}: the sleeps did not start: {d:?}"));
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let pids: Vec<i32> = tree.iter().map(|(p, _)| *p).collect();
        let msg = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{round}}}}}"#
        );
        let sent = Instant::now();
        writeln!(stdin, "{msg}").map_err(|e| e.to_string())?;
        stdin.flush().map_err(|e| e.to_string())?;
        while alive(&pids) > 0 {
            if sent.elapsed() > Duration::from_secs(10) {
                return Err(format!(
                    "round {round}: processes left after 10 s: {tree:?}"
                ));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        times.push(sent.elapsed());
    }
    drop(stdin);
    let _ = child.wait();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "cancel_median_ms={:.1} cancel_max_ms={:.1} rounds={}",
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1]),
        times.len()
    );
    Ok(())
}
