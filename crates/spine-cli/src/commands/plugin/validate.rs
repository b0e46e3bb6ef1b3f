//! `spine plugin validate PATH [--strict]`: Claude Code's report of a plugin or a marketplace
//! (`spine_settings::plugins::validate`): per file checked, its errors (`✘`) and warnings
//! (`⚠`), each `field: message`; notes for what spine does not apply. Exit 1 on an error, or
//! on a warning with `--strict`; 0 otherwise.

use spine_settings::plugins::marketplace::Problem;

use crate::cli::PluginValidateArgs;
use crate::error::exit;

/// `spine plugin validate`.
pub(super) fn validate(args: &PluginValidateArgs) -> anyhow::Result<u8> {
    let sections = spine_settings::plugins::validate::validate(&args.path);
    let (mut errors, mut warnings) = (0, 0);
    for section in &sections {
        println!("Validating {}: {}\n", section.what, section.file.display());
        print_list("✘", "error", &section.check.errors);
        print_list("⚠", "warning", &section.check.warnings);
        for note in &section.notes {
            println!("  note: {}", note.message);
        }
        if !section.notes.is_empty() {
            println!();
        }
        errors += section.check.errors.len();
        warnings += section.check.warnings.len();
    }
    let failed = errors > 0 || (args.strict && warnings > 0);
    match (failed, warnings) {
        (true, _) if errors == 0 => println!("✘ Validation failed (--strict treats warnings as errors)"),
        (true, _) => println!("✘ Validation failed"),
        (false, 0) => println!("✔ Validation passed"),
        (false, _) => println!("✔ Validation passed with warnings"),
    }
    Ok(if failed { exit::FAILED } else { exit::OK })
}

fn print_list(mark: &str, what: &str, problems: &[Problem]) {
    if problems.is_empty() {
        return;
    }
    let plural = if problems.len() == 1 { "" } else { "s" };
    println!("{mark} Found {} {what}{plural}:\n", problems.len());
    for p in problems {
        println!("  ❯ {}: {}", p.field, p.message);
    }
    println!();
}
