complete -c sneaky-map -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-map -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-map -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-map -l path -d 'Directory to map, relative to the workspace root. Default: ".".' -r
complete -c sneaky-map -l max-tokens -d 'Most tokens the map may take (o200k_base, estimated). Default: 1024.' -r
complete -c sneaky-map -l focus -d 'Files, folders or names to rank first, e.g. ["src/fs/walk.rs", "Searcher"].' -r
complete -c sneaky-map -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-map -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-map -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-map -s V -l version -d 'Print version'
