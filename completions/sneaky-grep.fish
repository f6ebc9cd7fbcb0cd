complete -c sneaky-grep -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-grep -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-grep -l format -d 'json: one JSON envelope (default); text: for people (raw content, path:line:text, the command\'s own output, diffs)' -r -f -a "json\t''
text\t''"
complete -c sneaky-grep -l pattern -d 'Regular expression to search for, e.g. "fn main" or "TODO|FIXME".' -r
complete -c sneaky-grep -l path -d 'Directory or file to search in, relative to the workspace root. Default: ".".' -r
complete -c sneaky-grep -l file-pattern -d 'Only search files whose name matches this glob, e.g. "*.py" (gitignore-style glob; a leading "!" excludes).' -r
complete -c sneaky-grep -s g -l glob -d 'More globs like file_pattern (rg\'s -g), e.g. ["*.rs", "!tests/**"]; a glob with "/" matches the path from the workspace root.' -r
complete -c sneaky-grep -s t -l type -d 'Only search files of these types (rg\'s -t), e.g. ["rust", "py"].' -r
complete -c sneaky-grep -s T -l type-not -d 'Do not search files of these types (rg\'s -T).' -r
complete -c sneaky-grep -l output-mode -d '"content" (matching lines, the default), "files_with_matches" (the paths of files that match) or "count" (matching lines per file).' -r
complete -c sneaky-grep -s C -l context -d 'Lines of context to return before and after each match. Default: 0.' -r
complete -c sneaky-grep -s B -l before-context -d 'Lines of context before each match (overrides context).' -r
complete -c sneaky-grep -s A -l after-context -d 'Lines of context after each match (overrides context).' -r
complete -c sneaky-grep -l max-results -d 'Most results (matches, files or counts) to return. Default: 1000.' -r
complete -c sneaky-grep -l offset -d 'Results to skip, for the next page after a truncated one (see next_offset). Default: 0.' -r
complete -c sneaky-grep -l pretty -d 'Pretty-print the JSON result'
complete -c sneaky-grep -l schema -d 'Print the JSON Schema of the input and exit'
complete -c sneaky-grep -s i -l case-insensitive -d 'Match without regard to case. Default: false.'
complete -c sneaky-grep -s F -l fixed-strings -d 'Treat the pattern as a literal string, not a regular expression. Default: false.'
complete -c sneaky-grep -s w -l word-regexp -d 'Only match whole words. Default: false.'
complete -c sneaky-grep -l hidden -d 'Search hidden files and directories too. Default: false.'
complete -c sneaky-grep -l no-ignore -d 'Do not skip what .gitignore, .ignore and .rgignore files exclude. Default: false.'
complete -c sneaky-grep -s l -d 'Same as --output-mode files_with_matches'
complete -c sneaky-grep -s c -d 'Same as --output-mode count'
complete -c sneaky-grep -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-grep -s V -l version -d 'Print version'
