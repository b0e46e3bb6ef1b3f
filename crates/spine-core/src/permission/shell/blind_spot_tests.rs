//! The rule layer's blind spots, one test per rule: each command below ran `rm victim` in
//! bash while a deny rule `Bash(rm *)` (bypassPermissions) or an allow rule `Bash(echo *)`
//! (default mode) let it through. Each must now be seen through (`rm` is listed) or opaque, so
//! that the deny holds and the allow does not cover it. Look-alikes that only compute
//! integers or read names stay transparent.

use std::path::PathBuf;

use serde_json::{Map, Value, json};
use spine_protocol::permission::{PermissionBehavior, PermissionMode, PermissionSuggestion};
use spine_protocol::tool::Effect;

use super::*;
use crate::permission::{CallFacts, PermissionPolicy, PermissionRule, PermissionRules};

fn decide(command: &str, rules: PermissionRules, mode: PermissionMode) -> PermissionBehavior {
    let policy = PermissionPolicy::new(rules, mode, PathBuf::from("/proj"));
    let args: Map<String, Value> = json!({"command": command}).as_object().cloned().unwrap_or_default();
    policy.decide(CallFacts::new("Bash", Effect::Execute, &args), &PermissionSuggestion::Passthrough, None).behavior
}

fn rule(text: &str) -> PermissionRule {
    PermissionRule::parse(text).expect("rule")
}

/// `Bash(rm *)` denied in bypassPermissions: the call is not allowed.
fn deny_holds(command: &str) -> bool {
    let rules = PermissionRules { deny: vec![rule("Bash(rm *)")], ..PermissionRules::default() };
    decide(command, rules, PermissionMode::BypassPermissions) != PermissionBehavior::Allow
}

/// `Bash(echo *)` allowed in the default mode: the call is not allowed by it.
fn echo_allow_does_not_cover(command: &str) -> bool {
    let rules = PermissionRules { allow: vec![rule("Bash(echo *)")], ..PermissionRules::default() };
    decide(command, rules, PermissionMode::Default) != PermissionBehavior::Allow
}

/// The command hides `rm victim` from neither rule: `rm` is listed, or it is opaque.
#[track_caller]
fn blind_spot_closed(command: &str) {
    let analysis = analyze(command);
    let sees_rm = analysis.commands.iter().any(|c| c.program() == "rm");
    assert!(sees_rm || analysis.is_opaque(), "{command}: {analysis:?}");
    assert!(deny_holds(command), "deny Bash(rm *) must hold: {command}");
    assert!(echo_allow_does_not_cover(command), "allow Bash(echo *) must not cover: {command}");
}

#[track_caller]
fn transparent(command: &str) {
    let analysis = analyze(command);
    assert!(!analysis.is_opaque(), "{command}: {:?}", analysis.opaque);
}

#[test]
fn a_prompt_transform_of_a_variable_is_opaque() {
    for command in [
        "x='$(rm victim)'; echo ${x@P}",
        "x='$(rm victim)'; echo \"${x@P}\"",
        "echo ${x@E}",
        "cat <<EOF\n${x@P}\nEOF",
        "echo ${x@Q} ${a[@]@A}",
    ] {
        blind_spot_closed(command);
    }
    transparent("echo ${!prefix@} ${a[@]} ${#x}");
}

#[test]
fn a_variable_holding_data_evaluated_in_arithmetic_is_opaque() {
    for command in [
        "x='a[$(rm victim)]'; echo $((x))",
        "x='a[$(rm victim)]'; echo $(( $x ))",
        "x='a[$(rm victim)]'; echo $[x]",
        "x='a[$(rm victim)]'; (( x ))",
        "x='a[$(rm victim)]'; for ((i=x; 0;)); do :; done",
        "x='a[$(rm victim)]'; echo ${a[x]} ${a[$x]}",
        "x='a[$(rm victim)]'; b[x]=1",
        "x='a[$(rm victim)]'; s=abc; echo ${s:x}",
        "x='a[$(rm victim)]'; [[ x -eq 0 ]]",
        "x='a[$(rm victim)]'; [[ $x -lt 1 ]]",
        "read -r x < f; echo $((x))",
        "read -r x < f; cat <<EOF\n$((x))\nEOF",
        "x=$(cat f); echo $((x + 1))",
        "for x in $(cat f); do echo $((x)); done",
        "set -- 'a[$(rm victim)]'; echo $(($1))",
        "echo 'a[$(rm victim)]'; echo $((_))",
        "f() { echo $(( $1 )); }; f 'a[$(rm victim)]'",
        "echo $(( $(cat f) ))",
        "x='a[$(rm victim)]'; echo ${!x}",
        "env x='a[$(rm victim)]' bash -c 'echo $((x))'",
    ] {
        blind_spot_closed(command);
    }
}

#[test]
fn a_subscript_with_an_expansion_in_an_arithmetic_context_is_opaque() {
    for command in ["(( a[$x] ))", "echo $(( a[$(echo 1)] + 1 ))", "let 'a[$(rm victim)]=1'", "let \"a[$x]=1\""] {
        blind_spot_closed(command);
    }
}

#[test]
fn integers_and_variables_that_hold_no_data_stay_transparent_in_arithmetic() {
    for command in [
        "for ((i=0; i<3; i++)); do echo $((i * 2)); done",
        "n=5; n=$((n + 1)); echo $((n)) ${a[n]}",
        "for i in 1 2 3; do echo ${arr[$i]}; done",
        "[[ $# -eq 0 ]] && echo none",
        "count=$(grep -c x f); [ \"$count\" -gt 0 ] && test \"$count\" -lt 9",
        "ENV=prod make deploy",
        "let 'i += 1'",
        "echo $((RANDOM % 6)) $(( ${#x} + 1 ))",
        "while read -r line; do echo \"$line\"; done < f",
        "declare -a arr=(1 2); export PATH=\"$PATH:/x\"",
    ] {
        transparent(command);
    }
}

#[test]
fn a_name_argument_with_a_subscript_holding_an_expansion_is_opaque() {
    for command in [
        "printf -v 'a[$(rm victim)]' x",
        "printf -v\"a[\\$(rm victim)]\" x",
        "read -r 'a[$(rm victim)]' <<< x",
        "echo x | read -r 'a[$(rm victim)]'",
        "read -a 'a[$(rm victim)]'",
        "mapfile -t 'a[$(rm victim)]' <<< x",
        "readarray 'a[$(rm victim)]' < f",
        "getopts a 'a[$(rm victim)]'",
        "wait -p 'a[$(rm victim)]'",
        "test -v 'a[$(rm victim)]'",
        "[ -v 'a[$(rm victim)]' ]",
        "[[ -v a[$x] ]]",
        "[[ -v $name ]]",
        "declare 'a[$(rm victim)]=1'",
        "typeset 'a[$(rm victim)]=1'",
        "f() { local 'a[$(rm victim)]=1'; }; f",
        "export 'a[$(rm victim)]=1'",
        "readonly 'a[$(rm victim)]=1'",
        "local a[$i]=3",
        "declare \"$n=1\"",
        "unset 'a[$(rm victim)]'",
        "builtin declare 'a[$(rm victim)]=1'",
        "read \"$name\"",
        "op=-v; test \"$op\" 'a[$(rm victim)]'",
        "o=-v; printf \"$o\" 'a[$(rm victim)]' x",
        "wait \"$p\" 'a[$(rm victim)]'",
    ] {
        blind_spot_closed(command);
    }
    for command in [
        "printf -v out '%s' x",
        "printf '%s %s' \"$a\" \"$b\"",
        "read -r a b < f",
        "test -v HOME",
        "test \"$a\" = \"$b\"",
        "wait $pid",
        "unset -v a b",
        "declare -p x",
    ] {
        transparent(command);
    }
}

#[test]
fn namerefs_and_integer_variables_holding_data_are_opaque() {
    for command in
        ["declare -n r='a[$(rm victim)]'; echo $r", "declare -i x; x='a[$(rm victim)]'", "local -i x; read x"]
    {
        blind_spot_closed(command);
    }
    transparent("declare -i n=0; n+=1");
}

#[test]
fn prompt_and_startup_variables_that_hold_code_are_opaque() {
    for command in [
        "PS4='$(rm victim)'; set -x; echo",
        "PS4='$(rm victim)' bash -xc 'echo'",
        "env PS4='`rm victim`' bash -xc 'echo'",
        "export PS4=\"$X\"",
        "BASH_ENV=<(echo rm victim) bash -c echo",
        "echo 'rm victim' | BASH_ENV=/dev/stdin bash -c echo",
        "ENV=/dev/stdin sh -i -c echo",
        "env 'BASH_FUNC_echo%%=() { rm victim; }' bash -c 'echo'",
    ] {
        blind_spot_closed(command);
    }
    transparent("PS4='+ '; set -x; echo");
}

#[test]
fn builtins_that_run_a_string_are_opaque() {
    for command in [
        "compgen -C 'rm victim' x",
        "compgen -W '$(rm victim)' x",
        "compgen -F f x",
        "complete -C 'rm victim' echo",
        "mapfile -C 'rm victim' -c 1 a <<< x",
        "readarray -c1 -C'rm victim' a < f",
        "fc -s echo=rm",
        "bind -x '\"x\": rm victim'",
    ] {
        blind_spot_closed(command);
    }
}

#[test]
fn builtins_and_variables_that_rebind_a_command_name_are_opaque() {
    for command in [
        "hash -p /bin/rm echo; echo victim",
        "BASH_CMDS[echo]=/bin/rm; echo victim",
        "enable -f ./evil.so echo; echo victim",
        "shopt -s expand_aliases; echo victim",
        "alias echo='rm victim'",
        "sh -c \"alias echo='rm victim'\necho\"",
        "BASH_ALIASES[echo]='rm victim'",
    ] {
        blind_spot_closed(command);
    }
    transparent("hash -r; alias; shopt -s nullglob");
}

#[test]
fn a_line_continuation_inside_a_command_name_is_joined() {
    for command in ["r\\\nm victim", "\"r\"\\\nm victim", "echo x; r\\\n\\\nm victim", "$(r\\\nm victim)"] {
        blind_spot_closed(command);
        assert!(analyze(command).commands.iter().any(|c| c.text() == "rm victim"), "{command}");
    }
    for command in ["echo x >ou\\\nt", "P\\\nS4='$(rm victim)'; set -x; :", "i\\\nf true; then rm victim; fi"] {
        blind_spot_closed(command);
        assert!(analyze(command).opaque.contains(&OpaqueReason::LineContinuation), "{command}");
    }
    transparent("echo a \\\n  b |\\\n  cat");
    assert!(analyze("echo a \\\n  b").commands.iter().any(|c| c.text() == "echo a b"));
}

#[test]
fn a_shell_reading_its_script_from_stdin_through_a_path_is_opaque() {
    for command in [
        "bash /dev/stdin <<< 'rm victim'",
        "echo 'rm victim' | sh /dev/stdin",
        "echo 'rm victim' | sh /dev/fd/0",
        "echo 'rm victim' | bash /proc/self/fd/0",
        "echo 'rm victim' | bash -s",
        "echo 'rm victim' | bash -s arg",
        "echo 'rm victim' | bash -e -- /dev//stdin",
        "bash script.sh <<< 'rm victim'",
        "bash <(echo rm victim)",
        "bash \"$SCRIPT\"",
        "bash --rcfile /dev/stdin -i <<< 'rm victim'",
        "bash",
        "echo 'rm victim' | python3 /dev/stdin",
        "fish -C 'rm victim' -c echo",
    ] {
        blind_spot_closed(command);
    }
    transparent("bash ./build.sh --release");
}

#[test]
fn find_exec_ends_at_a_plus_only_right_after_the_braces() {
    let command = "find . -maxdepth 0 -exec env -u + rm victim {} +";
    blind_spot_closed(command);
    assert!(argvs(command).iter().any(|c| c == "rm victim {}"), "{:?}", argvs(command));
    assert!(argvs("find . -exec echo + {} +").iter().any(|c| c == "echo + {}"));
    assert!(argvs("find . -exec echo {} + -exec rm x ;").iter().any(|c| c == "rm x"));
}

fn argvs(command: &str) -> Vec<String> {
    analyze(command).commands.iter().map(SimpleCommand::text).collect()
}

#[test]
fn an_xargs_replace_string_makes_the_words_holding_it_computed() {
    for command in ["xargs -I{} sh -c '{}' <<< 'rm victim'", "xargs -i sh -c 'x {}'", "xargs --replace=R bash -c R"] {
        blind_spot_closed(command);
    }
    assert!(argvs("xargs -I{} rm {}").iter().any(|c| c == "rm {}"));
    transparent("xargs -I{} echo {}");
}
