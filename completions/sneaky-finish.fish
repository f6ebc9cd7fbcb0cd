complete -c sneaky-finish -l root -d 'Workspace root (else SNEAKY_ROOT, else the current directory)' -r -F
complete -c sneaky-finish -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-finish -l message -d 'Final message to the user: what was done, and anything they should check.' -r
complete -c sneaky-finish -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-finish -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-finish -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-finish -s V -l version -d 'Print version'
