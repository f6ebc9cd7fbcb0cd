complete -c sneaky-patch -l root -d 'Workspace root (else SNEAKY_ROOT, else the current directory)' -r -F
complete -c sneaky-patch -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-patch -l file-path -d 'Path of the file to patch, relative to the workspace root; the file names in the patch\'s `---`/`+++` lines are then ignored. Omit it to apply a multi-file patch to the files its headers name.' -r
complete -c sneaky-patch -l patch -d 'The unified diff: hunks starting with `@@ -old_start,count +new_start,count @@`, then lines starting with \' \' (context), \'-\' (removed) or \'+\' (added). Give at least 3 lines of context around each change.' -r
complete -c sneaky-patch -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-patch -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-patch -l dry-run -d 'Only check that the patch applies and return the diff it would make; change nothing. Default: false.'
complete -c sneaky-patch -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-patch -s V -l version -d 'Print version'
