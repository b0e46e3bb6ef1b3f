//! `calculator {expression}` (effect: read): evaluates an arithmetic expression.
//!
//! Grammar (recursive descent, positions are 1-based character columns):
//!
//! ```text
//! expr    = term   (("+" | "-") term)*
//! term    = unary  (("*" | "/" | "%") unary)*
//! unary   = ("+" | "-") unary | power
//! power   = primary ("^" unary)?          right-associative, binds tighter than unary minus
//! primary = number | "(" expr ")"
//! number  = digits ["." digits*] | "." digits
//! ```
//!
//! So `-2^2 = -4`, `2^3^2 = 512`, `2^-1 = 0.5`. `%` is the remainder with the dividend's sign.
//! Division or remainder by zero, malformed input, unknown characters, nesting deeper than
//! [`MAX_DEPTH`] and non-finite results are [`CalcError`]s, reported as `validation_error`.
//! The response is `{"expression", "result"}` with `result` a JSON integer when integral
//! (and within ±2^53), a float otherwise; the projection reads `The calculator returned 4.`

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Number, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};
use thiserror::Error;

use crate::args;

/// Deepest nesting of parentheses and unary operators accepted.
pub const MAX_DEPTH: usize = 200;
/// Largest magnitude reported as a JSON integer (2^53, exactly representable).
const MAX_EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// Why an expression has no value. Positions are 1-based character columns.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CalcError {
    /// The expression is empty or blank.
    #[error("the expression is empty")]
    Empty,
    /// A character that is no part of the grammar.
    #[error("unknown character '{ch}' at position {pos}")]
    UnknownChar {
        /// The offending character.
        ch: char,
        /// 1-based character column.
        pos: usize,
    },
    /// The input ended where more was needed.
    #[error("unexpected end of expression at position {pos}: expected {expected}")]
    UnexpectedEnd {
        /// One past the last character.
        pos: usize,
        /// What was needed.
        expected: &'static str,
    },
    /// A token in the wrong place.
    #[error("unexpected '{found}' at position {pos}: expected {expected}")]
    Unexpected {
        /// The token as written.
        found: String,
        /// 1-based character column of the token.
        pos: usize,
        /// What was needed.
        expected: &'static str,
    },
    /// A malformed number such as `1.2.3`.
    #[error("malformed number '{text}' at position {pos}")]
    BadNumber {
        /// The number as written.
        text: String,
        /// 1-based character column where it starts.
        pos: usize,
    },
    /// Division or remainder by zero.
    #[error("{op} by zero at position {pos}")]
    DivisionByZero {
        /// `division` or `remainder`.
        op: &'static str,
        /// The operator's position.
        pos: usize,
    },
    /// A result that is infinite or not a number.
    #[error("the result of '{op}' at position {pos} is {what}")]
    NotFinite {
        /// The binary operator (`+ - * / % ^`).
        op: char,
        /// The operator's position.
        pos: usize,
        /// `too large` or `not a real number`.
        what: &'static str,
    },
    /// Nesting deeper than [`MAX_DEPTH`].
    #[error("the expression nests deeper than {MAX_DEPTH} levels at position {pos}")]
    TooDeep {
        /// 1-based character column of the token that went too deep.
        pos: usize,
    },
}

/// Evaluates an arithmetic expression.
pub fn evaluate(expression: &str) -> Result<f64, CalcError> {
    let tokens = lex(expression)?;
    if tokens.is_empty() {
        return Err(CalcError::Empty);
    }
    let end = expression.chars().count() + 1;
    let mut parser = Parser { tokens, at: 0, end, depth: 0 };
    let value = parser.expr()?;
    match parser.peek() {
        None => Ok(value),
        Some(t) => Err(CalcError::Unexpected {
            found: t.kind.to_string(),
            pos: t.pos,
            expected: "an operator or the end of the expression",
        }),
    }
}

/// Formats a value the way the response and the projection show it: integral values without
/// a fractional part, others in their shortest round-trip decimal form.
pub fn format_value(value: f64) -> String {
    json_number(value).map_or_else(|| value.to_string(), |n| n.to_string())
}

fn json_number(value: f64) -> Option<Number> {
    let value = if value == 0.0 { 0.0 } else { value }; // no "-0"
    if value.fract() == 0.0 && value.abs() <= MAX_EXACT_INT {
        Some(Number::from(value as i64))
    } else {
        Number::from_f64(value)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Num(f64),
    Op(char),
    Open,
    Close,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kind::Num(n) => write!(f, "{}", format_value(*n)),
            Kind::Op(c) => write!(f, "{c}"),
            Kind::Open => f.write_str("("),
            Kind::Close => f.write_str(")"),
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    pos: usize,
}

fn lex(input: &str) -> Result<Vec<Token>, CalcError> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let pos = i + 1;
        match c {
            c if c.is_whitespace() => i += 1,
            '0'..='9' | '.' => {
                let start = i;
                while chars.get(i).is_some_and(|c| c.is_ascii_digit() || *c == '.') {
                    i += 1;
                }
                let text: String = chars.get(start..i).unwrap_or(&[]).iter().collect();
                let valid = text.matches('.').count() <= 1 && text != ".";
                let value = text.parse::<f64>().ok().filter(|v| valid && v.is_finite());
                match value {
                    Some(v) => tokens.push(Token { kind: Kind::Num(v), pos }),
                    None => return Err(CalcError::BadNumber { text, pos }),
                }
            }
            '+' | '-' | '*' | '/' | '%' | '^' => {
                tokens.push(Token { kind: Kind::Op(c), pos });
                i += 1;
            }
            '(' => {
                tokens.push(Token { kind: Kind::Open, pos });
                i += 1;
            }
            ')' => {
                tokens.push(Token { kind: Kind::Close, pos });
                i += 1;
            }
            other => return Err(CalcError::UnknownChar { ch: other, pos }),
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    /// The position one past the input, for "unexpected end" errors.
    end: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    /// Consumes the next token when it is one of `ops`; returns the operator and position.
    fn eat_op(&mut self, ops: &[char]) -> Option<(char, usize)> {
        match self.peek() {
            Some(Token { kind: Kind::Op(c), pos }) if ops.contains(c) => {
                let found = (*c, *pos);
                self.at += 1;
                Some(found)
            }
            _ => None,
        }
    }

    fn descend(&mut self, pos: usize) -> Result<(), CalcError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH { Err(CalcError::TooDeep { pos }) } else { Ok(()) }
    }

    fn expr(&mut self) -> Result<f64, CalcError> {
        let mut value = self.term()?;
        while let Some((op, pos)) = self.eat_op(&['+', '-']) {
            let rhs = self.term()?;
            value = apply(op, pos, value, rhs)?;
        }
        Ok(value)
    }

    fn term(&mut self) -> Result<f64, CalcError> {
        let mut value = self.unary()?;
        while let Some((op, pos)) = self.eat_op(&['*', '/', '%']) {
            let rhs = self.unary()?;
            value = apply(op, pos, value, rhs)?;
        }
        Ok(value)
    }

    fn unary(&mut self) -> Result<f64, CalcError> {
        if let Some((op, pos)) = self.eat_op(&['+', '-']) {
            self.descend(pos)?;
            let value = self.unary()?;
            self.depth -= 1;
            return Ok(if op == '-' { -value } else { value });
        }
        self.power()
    }

    fn power(&mut self) -> Result<f64, CalcError> {
        let base = self.primary()?;
        match self.eat_op(&['^']) {
            Some((op, pos)) => {
                self.descend(pos)?;
                let exponent = self.unary()?;
                self.depth -= 1;
                apply(op, pos, base, exponent)
            }
            None => Ok(base),
        }
    }

    fn primary(&mut self) -> Result<f64, CalcError> {
        const EXPECTED: &str = "a number or '('";
        let Some(token) = self.peek().cloned() else {
            return Err(CalcError::UnexpectedEnd { pos: self.end, expected: EXPECTED });
        };
        self.at += 1;
        match token.kind {
            Kind::Num(v) => Ok(v),
            Kind::Open => {
                self.descend(token.pos)?;
                let value = self.expr()?;
                self.depth -= 1;
                match self.peek() {
                    Some(Token { kind: Kind::Close, .. }) => {
                        self.at += 1;
                        Ok(value)
                    }
                    Some(t) => Err(CalcError::Unexpected { found: t.kind.to_string(), pos: t.pos, expected: "')'" }),
                    None => Err(CalcError::UnexpectedEnd { pos: self.end, expected: "')'" }),
                }
            }
            other => Err(CalcError::Unexpected { found: other.to_string(), pos: token.pos, expected: EXPECTED }),
        }
    }
}

fn apply(op: char, pos: usize, a: f64, b: f64) -> Result<f64, CalcError> {
    let value = match op {
        '+' => a + b,
        '-' => a - b,
        '*' => a * b,
        '/' if b == 0.0 => {
            return Err(CalcError::DivisionByZero { op: "division", pos });
        }
        '/' => a / b,
        '%' if b == 0.0 => {
            return Err(CalcError::DivisionByZero { op: "remainder", pos });
        }
        '%' => a % b,
        _ => a.powf(b),
    };
    if value.is_nan() {
        Err(CalcError::NotFinite { op, pos, what: "not a real number" })
    } else if value.is_infinite() {
        Err(CalcError::NotFinite { op, pos, what: "too large" })
    } else {
        Ok(value)
    }
}

/// The `calculator` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct CalculatorTool;

#[derive(Deserialize, JsonSchema)]
struct CalculatorArgs {
    /// The expression, e.g. "(2 + 3) * 4 ^ 2 / 8".
    #[schemars(length(min = 1))]
    expression: String,
}

#[async_trait]
impl Tool for CalculatorTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "calculator".to_owned(),
            description: "Evaluates an arithmetic expression: + - * / % ^ (power, \
                          right-associative), parentheses, decimals, unary minus."
                .to_owned(),
            input_schema: args::schema::<CalculatorArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let CalculatorArgs { expression } = args::parse(args)?;
        let value = evaluate(&expression).map_err(|e| ToolError::new(ErrorCode::ValidationError, e.to_string()))?;
        let result = json_number(value).map_or(Value::Null, Value::Number);
        Ok(json!({"expression": expression, "result": result}))
    }

    fn project(&self, response: &Value) -> Projection {
        let result = match response.get("result") {
            Some(Value::Number(n)) => n.to_string(),
            Some(other) => other.to_string(),
            None => "nothing".to_owned(),
        };
        let mut projection = Projection::plain(format!("The calculator returned {result}."));
        if let Some(expression) = response.get("expression") {
            projection = projection.with("expression", expression.clone());
        }
        if let Some(value) = response.get("result") {
            projection = projection.with("result", value.clone());
        }
        projection
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(s: &str) -> f64 {
        evaluate(s).expect(s)
    }

    #[test]
    fn precedence_associativity_and_unary_minus_follow_usual_math() {
        assert_eq!(eval("2 + 3 * 4"), 14.0);
        assert_eq!(eval("(2 + 3) * 4"), 20.0);
        assert_eq!(eval("10 - 4 - 3"), 3.0);
        assert_eq!(eval("2 ^ 3 ^ 2"), 512.0);
        assert_eq!(eval("-2 ^ 2"), -4.0);
        assert_eq!(eval("2 ^ -1"), 0.5);
        assert_eq!(eval("--3"), 3.0);
        assert_eq!(eval("+.5 * 4"), 2.0);
        assert_eq!(eval("-7 % 3"), -1.0);
        assert_eq!(eval("8 / 2 / 2"), 2.0);
        assert_eq!(eval("2 * -3"), -6.0);
    }

    #[test]
    fn errors_name_their_position() {
        assert_eq!(evaluate("2 +"), Err(CalcError::UnexpectedEnd { pos: 4, expected: "a number or '('" }));
        assert_eq!(evaluate("1/0"), Err(CalcError::DivisionByZero { op: "division", pos: 2 }));
        assert_eq!(evaluate("2 * x"), Err(CalcError::UnknownChar { ch: 'x', pos: 5 }));
        assert!(matches!(evaluate("1.2.3"), Err(CalcError::BadNumber { pos: 1, .. })));
        assert!(matches!(evaluate("(1 + 2"), Err(CalcError::UnexpectedEnd { .. })));
        assert!(matches!(evaluate("2 (3)"), Err(CalcError::Unexpected { pos: 3, .. })));
        assert!(matches!(evaluate("10 ^ 400"), Err(CalcError::NotFinite { op: '^', .. })));
        assert!(matches!(evaluate("(-8) ^ 0.5"), Err(CalcError::NotFinite { .. })));
        assert_eq!(evaluate("   "), Err(CalcError::Empty));
    }

    #[test]
    fn deep_nesting_is_refused_instead_of_overflowing_the_stack() {
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(matches!(evaluate(&deep), Err(CalcError::TooDeep { .. })));
        let minus = format!("{}1", "-".repeat(10_000));
        assert!(matches!(evaluate(&minus), Err(CalcError::TooDeep { .. })));
    }

    #[test]
    fn values_format_without_a_needless_fraction() {
        assert_eq!(format_value(4.0), "4");
        assert_eq!(format_value(-0.0), "0");
        assert_eq!(format_value(2.5), "2.5");
        assert_eq!(format_value(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(format_value(1e300), "1e+300");
    }
}
