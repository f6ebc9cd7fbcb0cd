complete -c sneaky-find -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-find -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-find -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-find -l pattern -d 'Glob pattern: "*" and "?" within a name, "**" across directories, "{a,b}" alternatives.' -r
complete -c sneaky-find -l path -d 'Directory to search in, relative to the workspace root. Default: ".".' -r
complete -c sneaky-find -s t -l type -d 'Only entries of these types (fd\'s -t): "f" (file), "d" (directory), "l" (symlink).' -r
complete -c sneaky-find -s e -l extension -d 'Only entries with one of these extensions (fd\'s -e), e.g. ["rs", "toml"]; case is ignored.' -r
complete -c sneaky-find -s d -l max-depth -d 'Descend at most this many levels (fd\'s -d); 1 lists only the directory\'s own entries.' -r
complete -c sneaky-find -s E -l exclude -d 'Leave out entries matching these globs, and what is below them (fd\'s -E).' -r
complete -c sneaky-find -l max-results -d 'Most paths to return. Default: 1000.' -r
complete -c sneaky-find -l offset -d 'Paths to skip, for the next page after a truncated one (see next_offset). Default: 0.' -r
complete -c sneaky-find -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-find -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-find -s H -l hidden -d 'Include hidden files and directories (fd\'s -H). Default: false.'
complete -c sneaky-find -s I -l no-ignore -d 'Do not skip what .gitignore, .ignore and .fdignore files exclude (fd\'s -I). Default: false.'
complete -c sneaky-find -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-find -s V -l version -d 'Print version'
