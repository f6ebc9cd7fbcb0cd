complete -c sneaky-symbol -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-symbol -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-symbol -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-symbol -l name -d 'The symbol\'s name, e.g. "Searcher", or a name path, e.g. "Searcher/search_path": the names of its containers (class, impl, module …), outermost first, then its own.' -r
complete -c sneaky-symbol -l path -d 'Directory or file to search in, relative to the workspace root. Default: ".".' -r
complete -c sneaky-symbol -l kind -d 'Only definitions of this kind.' -r
complete -c sneaky-symbol -l offset -d 'Definitions to skip, for the next page after a truncated one. Default: 0.' -r
complete -c sneaky-symbol -l limit -d 'Most definitions to return. Default: 100.' -r
complete -c sneaky-symbol -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-symbol -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-symbol -l exact -d 'true (default): the name is matched whole, case included; false: a definition whose name contains it, case ignored, is found too.'
complete -c sneaky-symbol -l include-body -d 'Return each definition\'s whole text in `body`. Default: false.'
complete -c sneaky-symbol -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-symbol -s V -l version -d 'Print version'
