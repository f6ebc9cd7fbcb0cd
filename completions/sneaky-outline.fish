complete -c sneaky-outline -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-outline -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-outline -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-outline -l path -d 'File or directory, relative to the workspace root, e.g. "src/lib.rs" or "src/".' -r
complete -c sneaky-outline -l depth -d 'Levels of nesting to list: 1 lists only top-level definitions, 2 also their members (methods, fields, variants), and so on. Default: all.' -r
complete -c sneaky-outline -l offset -d 'Definitions to skip, for the next page after a truncated one (see next_offset). Default: 0.' -r
complete -c sneaky-outline -l limit -d 'Most definitions to return. Default: 500.' -r
complete -c sneaky-outline -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-outline -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-outline -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-outline -s V -l version -d 'Print version'
