//! calculator: the arithmetic grammar through the tool, the response and the projection.

use serde_json::json;
use spine_protocol::tool::ErrorCode;

use crate::support::Fixture;

async fn eval(f: &Fixture, expression: &str) -> serde_json::Value {
    f.call("calculator", json!({"expression": expression}))
        .await
        .unwrap_or_else(|e| panic!("{expression}: {e}"))["result"]
        .clone()
}

#[tokio::test]
async fn calculator_follows_usual_precedence_and_associativity() {
    let f = Fixture::new();
    for (expr, expected) in [
        ("2 + 2", json!(4)),
        ("2 + 3 * 4", json!(14)),
        ("(2 + 3) * 4", json!(20)),
        ("10 - 4 - 3", json!(3)),
        ("2 ^ 3 ^ 2", json!(512)),
        ("-2 ^ 2", json!(-4)),
        ("(-2) ^ 2", json!(4)),
        ("2 ^ -1", json!(0.5)),
        ("7 % 3", json!(1)),
        ("1.5 * 2", json!(3)),
        ("0.1 + 0.2", json!(0.30000000000000004)),
        ("-(3 - 5)", json!(2)),
        ("+4 / 8", json!(0.5)),
        ("  ((1))  ", json!(1)),
    ] {
        assert_eq!(eval(&f, expr).await, expected, "{expr}");
    }
}

#[tokio::test]
async fn calculator_projects_the_result_without_a_needless_fraction() {
    let f = Fixture::new();
    let r = f.call("calculator", json!({"expression": "2+2"})).await.expect("calc");
    assert_eq!(r, json!({"expression": "2+2", "result": 4}));
    assert_eq!(f.project("calculator", &r).content, "The calculator returned 4.");
    let r = f.call("calculator", json!({"expression": "10/4"})).await.expect("calc");
    assert_eq!(f.project("calculator", &r).content, "The calculator returned 2.5.");
}

#[tokio::test]
async fn calculator_errors_are_validation_errors_naming_the_position() {
    let f = Fixture::new();
    for (expr, needle) in [
        ("2 +", "position 4"),
        ("1/0", "division by zero at position 2"),
        ("5 % 0", "remainder by zero at position 3"),
        ("2 * abc", "unknown character 'a' at position 5"),
        ("(1 + 2", "expected ')'"),
        ("1 2", "unexpected '2' at position 3"),
        ("1..2", "malformed number"),
        ("10 ^ 1000", "too large"),
    ] {
        let e = f.call("calculator", json!({"expression": expr})).await.expect_err(expr);
        assert_eq!(e.code, ErrorCode::ValidationError, "{expr}");
        assert!(e.message.contains(needle), "{expr}: {}", e.message);
    }
}
