complete -c sneaky-jobs -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-jobs -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-jobs -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-jobs -l job-id -d 'The job, as run_command\'s result or the list names it.' -r
complete -c sneaky-jobs -l offset -d 'Read again from this byte offset of each stream (0: everything still kept) instead of where the last read stopped.' -r
complete -c sneaky-jobs -l wait-ms -d 'Wait up to this many milliseconds for new output or for the job to end (default 0: answer at once; with wait_for, the default is tools.shell.default_timeout; at most 600000).' -r
complete -c sneaky-jobs -l wait-for -d 'Wait until the new output matches this regular expression (Perl-like; \\w, \\d and \\s are ASCII), the job ends, or wait_ms passes; `matched` says which.' -r
complete -c sneaky-jobs -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-jobs -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-jobs -l list -d 'List the workspace\'s jobs (command, start, state, exit code) instead of reading one.'
complete -c sneaky-jobs -l kill -d 'End the job and every process it started (SIGTERM, then SIGKILL a second later), and return its last output. Default: false.'
complete -c sneaky-jobs -l strip-escapes -d 'Remove terminal escape sequences (colours, cursor moves) from the output returned. Default: false.'
complete -c sneaky-jobs -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-jobs -s V -l version -d 'Print version'
