complete -c sneaky-run -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-run -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-run -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-run -l command -d 'The shell command line to run, e.g. "cargo test 2>&1 | tail -20" or "git status".' -r
complete -c sneaky-run -l timeout -d 'Timeout in seconds (default: tools.shell.default_timeout, 30; at most 3600). On expiry the command and everything it started are killed.' -r
complete -c sneaky-run -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-run -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-run -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-run -s V -l version -d 'Print version'
