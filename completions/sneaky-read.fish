complete -c sneaky-read -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-read -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-read -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-read -l file-path -d 'Path of the file to read, relative to the workspace root.' -r
complete -c sneaky-read -l offset -d 'First line to return, counting from 1 (for a PDF: first page). Default: 1.' -r
complete -c sneaky-read -l limit -d 'Maximum number of lines to return (for a PDF: pages). Default: all lines up to the end of the file.' -r
complete -c sneaky-read -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-read -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-read -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-read -s V -l version -d 'Print version'
