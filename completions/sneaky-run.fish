complete -c sneaky-run -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-run -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-run -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-run -l command -d 'The shell command line to run, e.g. "cargo test 2>&1 | tail -20" or "git status".' -r
complete -c sneaky-run -l timeout -d 'Timeout in seconds (default: tools.shell.default_timeout, 30; at most 3600). On expiry the command and everything it started are killed.' -r
complete -c sneaky-run -l wait-ms -d 'With background: how long to wait for output before returning, in milliseconds (default 1000, or the timeout when wait_for is given; at most 600000). The call returns earlier when the job ends or its output matches wait_for.' -r
complete -c sneaky-run -l wait-for -d 'With background: a regular expression (Perl-like; \\w, \\d and \\s are ASCII); the call returns as soon as the job\'s output matches it (e.g. "Listening on|Serving HTTP"), and `matched` says whether it did.' -r
complete -c sneaky-run -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-run -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-run -l background -d 'Start the command as a background job and return while it still runs, with its output so far and a job_id for job_output and job_input. The job runs under the same sandbox; its changes to the workspace are held until it ends, then applied as one change that job_output reports (a command run meanwhile does not see them); it ends when job_output kills it, at its lease (tools.shell.max_job_seconds) or when the host that started it ends. Later commands reach the ports it listens on through localhost. Default: false.'
complete -c sneaky-run -l tty -d 'With background: run the job on a pseudo-terminal, for programs that act differently on one (interactive interpreters, prompts); its stderr then goes to stdout. Default: false.'
complete -c sneaky-run -l strip-escapes -d 'With background: remove terminal escape sequences (colours, cursor moves) from the output returned. Default: false.'
complete -c sneaky-run -l dry-run -d 'Run the command with its file changes held aside: they are reported (`changes`, `diff`) and not applied, and the workspace is left as it was. Not with background.'
complete -c sneaky-run -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-run -s V -l version -d 'Print version'
