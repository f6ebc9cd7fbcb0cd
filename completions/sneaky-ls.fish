complete -c sneaky-ls -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-ls -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-ls -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-ls -l directory-path -d 'Directory to list, relative to the workspace root. Default: "." (the root).' -r
complete -c sneaky-ls -l max-results -d 'Most entries to return. Default: 1000.' -r
complete -c sneaky-ls -l offset -d 'Entries to skip, for the next page after a truncated one (see next_offset). Default: 0.' -r
complete -c sneaky-ls -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-ls -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-ls -l recursive -d 'List subdirectories too. Default: false.'
complete -c sneaky-ls -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-ls -s V -l version -d 'Print version'
