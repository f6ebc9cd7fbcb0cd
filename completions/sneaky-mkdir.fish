complete -c sneaky-mkdir -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-mkdir -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-mkdir -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-mkdir -l directory-path -d 'Path of the directory to create, relative to the workspace root.' -r
complete -c sneaky-mkdir -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-mkdir -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-mkdir -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-mkdir -s V -l version -d 'Print version'
