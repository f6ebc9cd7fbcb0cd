complete -c sneaky-input -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-input -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-input -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-input -l job-id -d 'The job, as run_command\'s result or job_output\'s list names it.' -r
complete -c sneaky-input -l input -d 'The text to write, as is.' -r
complete -c sneaky-input -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-input -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-input -l eof -d 'Then close the job\'s input (end of file; on a terminal the end-of-file character), for a program that reads until its input ends. Default: false.'
complete -c sneaky-input -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-input -s V -l version -d 'Print version'
