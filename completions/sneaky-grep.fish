complete -c sneaky-grep -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-grep -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-grep -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-grep -l pattern -d 'Regular expression to search for, e.g. "fn main" or "TODO|FIXME".' -r
complete -c sneaky-grep -l path -d 'Directory or file to search in, relative to the workspace root. Default: ".".' -r
complete -c sneaky-grep -l file-pattern -d 'Only search files whose name matches this glob, e.g. "*.py" (gitignore-style glob; a leading "!" excludes).' -r
complete -c sneaky-grep -l context -d 'Lines of context to return before and after each match. Default: 0.' -r
complete -c sneaky-grep -l max-results -d 'Most matches to return. Default: 1000.' -r
complete -c sneaky-grep -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-grep -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-grep -l case-insensitive -d 'Match without regard to case. Default: false.'
complete -c sneaky-grep -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-grep -s V -l version -d 'Print version'
