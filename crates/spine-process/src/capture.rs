//! Capped text: what is kept of output that may be arbitrarily long.
//!
//! - [`Utf8Stream`] decodes a byte stream into text chunk by chunk; a multi-byte character
//!   split across reads is carried to the next read, invalid bytes become U+FFFD.
//! - [`CappedText`] keeps the **head and the tail** of a stream (half the cap each) and counts
//!   what it drops, in bounded memory. The tail matters: a failing build prints its error last.
//! - [`render_pair`] shares one budget between two streams (stdout and stderr): when both fit
//!   they are kept whole; otherwise the smaller gets up to half and the larger the rest.
//!   Dropped text is replaced by one marker line in the middle of the stream:
//!   `\n... [output truncated: N characters omitted] ...\n` ([`is_truncated`] recognises it).
//!
//! All limits count characters (Unicode scalar values), not bytes; the marker is not counted.

/// The marker's opening text.
const MARKER_OPEN: &str = "\n... [output truncated: ";
/// The marker's closing text.
const MARKER_CLOSE: &str = " characters omitted] ...\n";

/// Incremental UTF-8 decoding of a byte stream.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Decodes `bytes` after whatever was pending; returns the complete text.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    out.push_str(&String::from_utf8_lossy(valid));
                    match e.error_len() {
                        Some(n) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = after.get(n..).unwrap_or(&[]);
                        }
                        // An incomplete character at the end: wait for more bytes.
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        out
    }

    /// Flushes what is left at end of stream (an incomplete character becomes U+FFFD).
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        String::from_utf8_lossy(&rest).into_owned()
    }
}

/// The head and tail of a stream, capped at `cap` characters kept.
#[derive(Debug, Clone)]
pub struct CappedText {
    head_cap: usize,
    tail_cap: usize,
    head: String,
    head_chars: usize,
    /// The newest characters; may hold up to twice `tail_cap` between trims.
    tail: String,
    tail_chars: usize,
    /// Every character pushed.
    total_chars: usize,
}

impl CappedText {
    /// An empty buffer keeping at most `cap` characters.
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        CappedText {
            head_cap,
            tail_cap: cap - head_cap,
            head: String::new(),
            head_chars: 0,
            tail: String::new(),
            tail_chars: 0,
            total_chars: 0,
        }
    }

    /// Appends text.
    pub fn push(&mut self, text: &str) {
        let mut rest = text;
        if self.head_chars < self.head_cap {
            let room = self.head_cap - self.head_chars;
            let split = byte_index_of_char(rest, room);
            let (into_head, after) = rest.split_at(split);
            let n = into_head.chars().count();
            self.head.push_str(into_head);
            self.head_chars += n;
            self.total_chars += n;
            rest = after;
        }
        if rest.is_empty() {
            return;
        }
        let n = rest.chars().count();
        self.tail.push_str(rest);
        self.tail_chars += n;
        self.total_chars += n;
        if self.tail_chars > self.tail_cap.saturating_mul(2).max(1) {
            self.trim_tail(self.tail_cap);
        }
    }

    /// Characters pushed so far.
    pub fn total_chars(&self) -> usize {
        self.total_chars
    }

    /// The number of characters kept at most.
    pub fn cap(&self) -> usize {
        self.head_cap + self.tail_cap
    }

    /// Whether more characters were pushed than the cap keeps (something was, or will be,
    /// dropped from the middle).
    pub fn exceeded(&self) -> bool {
        self.total_chars > self.cap()
    }

    /// The stream within the cap: whole when it fits, otherwise head, marker, tail.
    pub fn text(&self) -> String {
        self.render(self.cap())
    }

    /// Whether nothing has been dropped yet, so `head + tail` is the whole stream.
    fn complete(&self) -> bool {
        self.head_chars + self.tail_chars == self.total_chars
    }

    fn trim_tail(&mut self, keep: usize) {
        if self.tail_chars > keep {
            let cut = byte_index_of_char(&self.tail, self.tail_chars - keep);
            self.tail.drain(..cut);
            self.tail_chars = keep;
        }
    }

    /// Renders the stream within `budget` characters (at most the cap): whole when it fits,
    /// otherwise head, marker, tail.
    pub fn render(&self, budget: usize) -> String {
        let budget = budget.min(self.head_cap + self.tail_cap);
        if self.complete() {
            let mut whole = self.head.clone();
            whole.push_str(&self.tail);
            if self.total_chars <= budget {
                return whole;
            }
            let head_n = budget / 2;
            let tail_n = budget - head_n;
            let head_end = byte_index_of_char(&whole, head_n);
            let tail_start = byte_index_of_char(&whole, self.total_chars - tail_n);
            return join_with_marker(&whole[..head_end], self.total_chars - budget, &whole[tail_start..]);
        }
        // Something was dropped: the head holds `head_cap` characters and the tail at least
        // `tail_cap`, and the budget needs at most that much of each.
        let head_n = budget / 2;
        let tail_n = budget - head_n;
        let head_end = byte_index_of_char(&self.head, head_n);
        let tail_start = byte_index_of_char(&self.tail, self.tail_chars.saturating_sub(tail_n));
        join_with_marker(&self.head[..head_end], self.total_chars - budget, &self.tail[tail_start..])
    }
}

fn join_with_marker(head: &str, omitted: usize, tail: &str) -> String {
    format!("{head}{MARKER_OPEN}{omitted}{MARKER_CLOSE}{tail}")
}

/// The byte index of the `n`th character of `s` (its length when `s` is shorter).
fn byte_index_of_char(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// Renders two streams sharing one budget of `budget` characters. Returns the texts and
/// whether anything was dropped.
pub fn render_pair(a: &CappedText, b: &CappedText, budget: usize) -> (String, String, bool) {
    let (la, lb) = (a.total_chars(), b.total_chars());
    if la + lb <= budget {
        return (a.render(la), b.render(lb), false);
    }
    let half = budget / 2;
    let (ba, bb) = if la <= lb {
        let ba = la.min(half);
        (ba, budget - ba)
    } else {
        let bb = lb.min(half);
        (budget - bb, bb)
    };
    (a.render(ba), b.render(bb), true)
}

/// Whether text carries the truncation marker of [`CappedText::render`].
pub fn is_truncated(text: &str) -> bool {
    text.match_indices(MARKER_OPEN).any(|(i, _)| {
        let rest = &text[i + MARKER_OPEN.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(MARKER_CLOSE)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_streams_are_kept_whole() {
        let mut t = CappedText::new(10);
        t.push("abc");
        t.push("def");
        assert_eq!(t.render(10), "abcdef");
    }

    #[test]
    fn long_streams_keep_head_and_tail_with_a_marker() {
        let mut t = CappedText::new(10);
        for c in 'a'..='z' {
            t.push(&c.to_string());
        }
        let r = t.render(10);
        assert_eq!(r, "abcde\n... [output truncated: 16 characters omitted] ...\nvwxyz");
        assert!(is_truncated(&r));
        assert_eq!(t.total_chars(), 26);
    }

    #[test]
    fn a_budget_below_the_cap_cuts_a_complete_stream() {
        let mut t = CappedText::new(100);
        t.push("0123456789");
        assert_eq!(t.render(4), "01\n... [output truncated: 6 characters omitted] ...\n89");
    }

    #[test]
    fn pair_budget_favours_neither_stream_unfairly() {
        let mut a = CappedText::new(10);
        let mut b = CappedText::new(10);
        a.push("0123456789abcdef");
        b.push("xy");
        let (ra, rb, cut) = render_pair(&a, &b, 10);
        assert!(cut);
        assert_eq!(rb, "xy");
        assert_eq!(ra, "0123\n... [output truncated: 8 characters omitted] ...\ncdef");
    }

    #[test]
    fn multibyte_characters_split_across_reads_decode_whole() {
        let bytes = "héllo→".as_bytes();
        let mut d = Utf8Stream::default();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&d.push(&[*b]));
        }
        out.push_str(&d.finish());
        assert_eq!(out, "héllo→");
        let mut d = Utf8Stream::default();
        assert_eq!(d.push(&[b'a', 0xff, b'b']), "a\u{fffd}b");
    }
}
