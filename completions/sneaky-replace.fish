complete -c sneaky-replace -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-replace -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-replace -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-replace -l file-path -d 'Path of the file to edit, relative to the workspace root.' -r
complete -c sneaky-replace -l old-str -d 'The exact text to replace, including whitespace and indentation; must occur exactly once unless replace_all is set. Line endings may be written as \\n even in a CRLF file.' -r
complete -c sneaky-replace -l new-str -d 'The text to put in its place (may be empty to delete old_str).' -r
complete -c sneaky-replace -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-replace -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-replace -l replace-all -d 'Replace every occurrence instead of requiring exactly one. Default: false.'
complete -c sneaky-replace -l dry-run -d 'Only compute the diff the edit would make; change nothing. Default: false.'
complete -c sneaky-replace -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-replace -s V -l version -d 'Print version'
