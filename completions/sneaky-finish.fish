complete -c sneaky-finish -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-finish -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-finish -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-finish -l message -d 'Final message to the user: what was done, and anything they should check.' -r
complete -c sneaky-finish -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-finish -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-finish -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-finish -s V -l version -d 'Print version'
