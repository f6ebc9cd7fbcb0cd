complete -c sneaky-undo -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-undo -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-undo -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-undo -l change-id -d 'The change to take back (from an edit\'s result or the list); default: the most recent.' -r
complete -c sneaky-undo -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-undo -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-undo -l list -d 'List the recent changes, newest first, instead of taking one back.'
complete -c sneaky-undo -l dry-run -d 'Show what would be restored (the diff) and change nothing.'
complete -c sneaky-undo -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-undo -s V -l version -d 'Print version'
