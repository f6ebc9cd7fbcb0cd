complete -c sneaky-rm -l root -d 'Workspace root (else SNEAKY_ROOT, else the current directory)' -r -F
complete -c sneaky-rm -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-rm -l file-path -d 'Path of the file to delete, relative to the workspace root.' -r
complete -c sneaky-rm -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-rm -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-rm -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-rm -s V -l version -d 'Print version'
