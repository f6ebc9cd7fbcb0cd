# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_sneaky_agent_global_optspecs
    string join \n h/help V/version
end

function __fish_sneaky_agent_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_sneaky_agent_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_sneaky_agent_using_subcommand
    set -l cmd (__fish_sneaky_agent_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c sneaky-agent -n "__fish_sneaky_agent_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-agent -n "__fish_sneaky_agent_needs_command" -s V -l version -d 'Print version'
complete -c sneaky-agent -n "__fish_sneaky_agent_needs_command" -f -a "run" -d 'Work on a task with an LLM'
complete -c sneaky-agent -n "__fish_sneaky_agent_needs_command" -f -a "tools" -d 'Print the tool definitions as an API expects them'
complete -c sneaky-agent -n "__fish_sneaky_agent_needs_command" -f -a "pipe" -d 'Run tool calls read as JSON lines on stdin, one result line each'
complete -c sneaky-agent -n "__fish_sneaky_agent_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -l provider -d 'openai: any Chat Completions server with tools; anthropic: the Messages API' -r -f -a "openai\t''
anthropic\t''"
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -l base-url -d 'API base URL (else OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the provider\'s)' -r
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -l model -d 'Model name (else SNEAKY_MODEL)' -r
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -l max-turns -d 'Stop with an error after N model replies without finish' -r
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -l transcript -d 'Append every request, reply, call and result to FILE as JSON lines' -r -F
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -s y -l yes -d 'Approve every confirm-tier call without asking (denied tools stay denied)'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -s q -l quiet -d 'Print only the final message and errors'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand tools" -l format -d 'The API shape' -r -f -a "openai\t''
openai-responses\t''
anthropic\t''
mcp\t''
gemini\t''"
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand tools" -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand tools" -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand tools" -l strict -d 'With --format openai: strict function calling (strict: true); openai-responses is always strict'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand tools" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand pipe" -l root -d 'Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)' -r -F
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand pipe" -l config -d 'Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)' -r -F
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand pipe" -s y -l yes -d 'Approve every confirm-tier call without asking (denied tools stay denied)'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand pipe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand help; and not __fish_seen_subcommand_from run tools pipe help" -f -a "run" -d 'Work on a task with an LLM'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand help; and not __fish_seen_subcommand_from run tools pipe help" -f -a "tools" -d 'Print the tool definitions as an API expects them'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand help; and not __fish_seen_subcommand_from run tools pipe help" -f -a "pipe" -d 'Run tool calls read as JSON lines on stdin, one result line each'
complete -c sneaky-agent -n "__fish_sneaky_agent_using_subcommand help; and not __fish_seen_subcommand_from run tools pipe help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
