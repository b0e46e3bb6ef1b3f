//! Values of Claude Code's list flags (`--allowedTools`, `--disallowedTools`, `--tools`): each
//! occurrence holds rules or names separated by spaces or commas; separators inside parentheses
//! belong to the rule (`"Bash(git *) Edit"` is two rules, `"Bash(a,b)"` one). Empty items are
//! dropped.

/// Splits every occurrence of a list flag into its items, in order.
pub fn split_list(values: &[String]) -> Vec<String> {
    let mut items = Vec::new();
    for value in values {
        let mut depth = 0usize;
        let mut current = String::new();
        for c in value.chars() {
            match c {
                '(' => {
                    depth += 1;
                    current.push(c);
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    current.push(c);
                }
                ',' | ' ' | '\t' | '\n' if depth == 0 => push_item(&mut items, &mut current),
                _ => current.push(c),
            }
        }
        push_item(&mut items, &mut current);
    }
    items
}

fn push_item(items: &mut Vec<String>, current: &mut String) {
    let item = std::mem::take(current);
    if !item.trim().is_empty() {
        items.push(item.trim().to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::split_list;

    fn split(values: &[&str]) -> Vec<String> {
        split_list(&values.iter().map(|v| (*v).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn spaces_and_commas_separate_rules_outside_parentheses() {
        assert_eq!(split(&["Bash(git *) Edit"]), ["Bash(git *)", "Edit"]);
        assert_eq!(split(&["Read,Grep, Glob"]), ["Read", "Grep", "Glob"]);
        assert_eq!(split(&["Bash(a,b)"]), ["Bash(a,b)"]);
        assert_eq!(split(&["Bash(npm run test:*)", "Write"]), ["Bash(npm run test:*)", "Write"]);
    }

    #[test]
    fn empty_items_are_dropped() {
        assert_eq!(split(&["  Read ,, Edit  "]), ["Read", "Edit"]);
        assert!(split(&[""]).is_empty());
    }
}
