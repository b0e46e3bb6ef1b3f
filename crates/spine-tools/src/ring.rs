//! A bounded byte ring for the output of long-lived processes (command runs, background
//! processes).
//!
//! Contract:
//! - [`OutputRing::push`] counts every byte and keeps at most `cap` of the **newest** ones;
//!   memory grows with the output up to `cap`, never beyond.
//! - [`OutputRing::total`] is every byte ever pushed; what is no longer kept shows as a tail
//!   shorter than the total.
//! - [`OutputRing::tail`] renders at most `max` of the newest bytes as text: a cut that lands
//!   inside a UTF-8 character skips the partial character, invalid bytes become U+FFFD, and
//!   [`Tail::truncated`] says whether the text is shorter than the whole stream.

/// The newest bytes of a stream, up to a capacity.
#[derive(Debug, Clone)]
pub(crate) struct OutputRing {
    /// The kept bytes; while `buf.len() < cap` they are in order from index 0, once full the
    /// oldest kept byte is at `start`.
    buf: Vec<u8>,
    cap: usize,
    start: usize,
    total: u64,
}

/// The rendered tail of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tail {
    /// The newest bytes of the stream, decoded as UTF-8 (invalid sequences replaced).
    pub text: String,
    /// Bytes of the stream the text covers.
    pub shown_bytes: u64,
    /// Every byte of the stream.
    pub total_bytes: u64,
    /// Whether the text is not the whole stream.
    pub truncated: bool,
}

impl OutputRing {
    /// An empty ring keeping at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        OutputRing { buf: Vec::new(), cap, start: 0, total: 0 }
    }

    /// Appends bytes, dropping the oldest beyond the capacity.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.cap == 0 || bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.cap {
            self.buf.clear();
            self.buf.extend_from_slice(&bytes[bytes.len() - self.cap..]);
            self.start = 0;
            return;
        }
        if self.buf.len() < self.cap {
            let n = (self.cap - self.buf.len()).min(bytes.len());
            self.buf.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        while !bytes.is_empty() {
            let n = (self.cap - self.start).min(bytes.len());
            self.buf[self.start..self.start + n].copy_from_slice(&bytes[..n]);
            self.start = (self.start + n) % self.cap;
            bytes = &bytes[n..];
        }
    }

    /// Every byte pushed.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The kept bytes, oldest first, as two slices.
    fn slices(&self) -> (&[u8], &[u8]) {
        if self.buf.len() < self.cap {
            (&self.buf, &[])
        } else {
            let (newer, older) = self.buf.split_at(self.start);
            (older, newer)
        }
    }

    /// The newest `max` bytes (fewer when fewer are kept).
    pub(crate) fn tail_bytes(&self, max: usize) -> Vec<u8> {
        let (a, b) = self.slices();
        let n = max.min(a.len() + b.len());
        let mut out = Vec::with_capacity(n);
        if n > b.len() {
            out.extend_from_slice(&a[a.len() - (n - b.len())..]);
            out.extend_from_slice(b);
        } else {
            out.extend_from_slice(&b[b.len() - n..]);
        }
        out
    }

    /// The newest `max` bytes as text.
    pub(crate) fn tail(&self, max: usize) -> Tail {
        let bytes = self.tail_bytes(max);
        let from_start = bytes.len() as u64 == self.total;
        // A cut inside a character: skip its continuation bytes (at most three).
        let skip = if from_start { 0 } else { bytes.iter().take(3).take_while(|b| (**b & 0xC0) == 0x80).count() };
        let text = String::from_utf8_lossy(&bytes[skip..]).into_owned();
        let shown = (bytes.len() - skip) as u64;
        Tail { text, shown_bytes: shown, total_bytes: self.total, truncated: shown < self.total }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut r = OutputRing::new(8);
        r.push(b"abc");
        r.push(b"de");
        assert_eq!(r.tail(100), Tail { text: "abcde".into(), shown_bytes: 5, total_bytes: 5, truncated: false });
    }

    #[test]
    fn the_ring_keeps_the_newest_bytes_and_counts_all() {
        let mut r = OutputRing::new(4);
        for chunk in [&b"ab"[..], b"cd", b"ef", b"g"] {
            r.push(chunk);
        }
        assert_eq!(r.tail_bytes(10), b"defg");
        assert_eq!(r.total(), 7);
        assert_eq!(r.tail_bytes(2), b"fg");
        let t = r.tail(10);
        assert_eq!(t.text, "defg");
        assert!(t.truncated);
        r.push(b"0123456789");
        assert_eq!(r.tail_bytes(10), b"6789");
        assert_eq!(r.total(), 17);
    }

    #[test]
    fn a_tail_cut_inside_a_character_skips_the_partial_character() {
        let mut r = OutputRing::new(4);
        r.push("aé→".as_bytes()); // 1 + 2 + 3 bytes: the ring keeps "é" minus its first byte, then "→"
        let t = r.tail(4);
        assert_eq!(t.text, "→");
        assert_eq!(t.shown_bytes, 3);
        assert!(t.truncated);
    }

    #[test]
    fn a_zero_capacity_ring_only_counts() {
        let mut r = OutputRing::new(0);
        r.push(b"abc");
        assert_eq!(r.total(), 3);
        assert_eq!(r.tail(10).text, "");
    }
}
