complete -c sneaky-mcp -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the client\'s first root, else the project around the current directory)' -r -F
complete -c sneaky-mcp -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-mcp -l structured-content -d 'on: results carry structuredContent and tools declare outputSchema (for clients that read the JSON result); off: results are content blocks only, the text written for the model and an image block (for hosts that show structuredContent to the model instead of the text). Default: off for Codex CLI and Claude Code (by the clientInfo name they send), on for every other client' -r -f -a "on\t''
off\t''"
complete -c sneaky-mcp -l http -d 'Serve Streamable HTTP at http://ADDR/mcp instead of stdio (HOST:PORT, :PORT or PORT; the host defaults to 127.0.0.1)' -r
complete -c sneaky-mcp -l token-file -d 'With --http: read the bearer token from FILE (else SNEAKY_MCP_TOKEN, else a random one)' -r -F
complete -c sneaky-mcp -l log-format -d 'Logs on stderr: text (lines) or json (JSON lines for a log collector: time and message, and one line per tool call with its session, tool, duration_ms and outcome, never its arguments)' -r -f -a "text\t''
json\t''"
complete -c sneaky-mcp -l allow-origin -d 'With --http: also accept requests from this browser Origin (loopback origins always are); repeatable' -r
complete -c sneaky-mcp -l read-only -d 'Offer only the auto-approved read tools (read_file, list_dir, grep_files, find_files)'
complete -c sneaky-mcp -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-mcp -s V -l version -d 'Print version'
