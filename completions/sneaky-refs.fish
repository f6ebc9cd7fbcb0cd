complete -c sneaky-refs -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-refs -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-refs -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-refs -l name -d 'The identifier, e.g. "walk_builder" (of a name path "Searcher/search_path", the last name).' -r
complete -c sneaky-refs -l path -d 'Directory or file to search in, relative to the workspace root. Default: ".".' -r
complete -c sneaky-refs -l offset -d 'Uses to skip, for the next page after a truncated one (see next_offset). Default: 0.' -r
complete -c sneaky-refs -l limit -d 'Most uses to return. Default: 200.' -r
complete -c sneaky-refs -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-refs -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-refs -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-refs -s V -l version -d 'Print version'
