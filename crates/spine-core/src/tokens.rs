//! Token estimates, cheap enough to run before every model request.
//!
//! [`TokenEstimator`] counts one text. Two estimators: [`WordsEstimator`], the seed's
//! (whitespace-separated words), and [`BpeEstimator`], a real BPE tokenizer of the model family
//! (`tiktoken-rs`, offline): `o200k_base` for GPT-4o/4.1/5 and o-series models, `cl100k_base`
//! for older OpenAI models and as a documented approximation for Anthropic models (whose
//! tokenizer is not public; cl100k counts are typically within ~10–20% of Claude's).
//!
//! Every message costs its text plus 4 tokens of framing. [`TokenCache`] keeps per-message
//! counts so that a request only counts what is new since the last one.

use std::sync::Arc;

use spine_protocol::message::Message;

/// Counts tokens of a text.
pub trait TokenEstimator: Send + Sync {
    /// The estimator's name, for traces (`words`, `o200k_base`, `cl100k_base`).
    fn name(&self) -> &'static str;
    /// Tokens in a text.
    fn count_text(&self, text: &str) -> u64;
    /// Tokens of a message: its text (and tool-call arguments) plus 4 of framing.
    fn count_message(&self, message: &Message) -> u64 {
        let mut n = 4 + message.text().map_or(0, |t| self.count_text(t));
        if let Message::Assistant(a) = message {
            for call in &a.tool_calls {
                n += self.count_text(&call.name) + self.count_text(&call.arguments.to_wire());
            }
        }
        n
    }
}

/// The seed's estimate: whitespace-separated words.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordsEstimator;

impl TokenEstimator for WordsEstimator {
    fn name(&self) -> &'static str {
        "words"
    }
    fn count_text(&self, text: &str) -> u64 {
        text.split_whitespace().count() as u64
    }
}

/// A BPE encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5, o-series.
    O200kBase,
    /// GPT-4, GPT-3.5, embeddings; the approximation used for Anthropic models.
    Cl100kBase,
}

/// A real tokenizer (loaded once per process, lazily).
#[derive(Debug, Clone, Copy)]
pub struct BpeEstimator {
    encoding: Encoding,
}

impl BpeEstimator {
    /// An estimator for an encoding.
    pub fn new(encoding: Encoding) -> Self {
        BpeEstimator { encoding }
    }

    /// The encoding of a model family, from its name.
    pub fn for_model(model: &str) -> Self {
        let m = model.rsplit([':', '/']).next().unwrap_or(model).to_ascii_lowercase();
        let o200k = m.starts_with("gpt-4o")
            || m.starts_with("gpt-4.1")
            || m.starts_with("gpt-4.5")
            || m.starts_with("gpt-5")
            || m.starts_with("chatgpt")
            || m.starts_with("o1")
            || m.starts_with("o3")
            || m.starts_with("o4");
        BpeEstimator::new(if o200k { Encoding::O200kBase } else { Encoding::Cl100kBase })
    }

    /// The encoding.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl TokenEstimator for BpeEstimator {
    fn name(&self) -> &'static str {
        match self.encoding {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
    fn count_text(&self, text: &str) -> u64 {
        let bpe = match self.encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        bpe.encode_ordinary(text).len() as u64
    }
}

/// The default estimator for a model: BPE of its family when the model is known, else words.
pub fn estimator_for(model: Option<&str>) -> Arc<dyn TokenEstimator> {
    match model {
        Some(m) if !m.is_empty() && m != "scripted" => Arc::new(BpeEstimator::for_model(m)),
        _ => Arc::new(WordsEstimator),
    }
}

/// Per-message counts of an append-only transcript: each request counts only the messages
/// added since the previous one. [`TokenCache::reset`] after anything rewrites the transcript
/// (compaction); a shrunk transcript or a changed last message also resets it.
#[derive(Debug, Clone, Default)]
pub struct TokenCache {
    counts: Vec<u64>,
    last_len: usize,
    total: u64,
}

impl TokenCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every count.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// The estimate of a transcript, counting only new messages.
    pub fn estimate(&mut self, estimator: &dyn TokenEstimator, messages: &[Message]) -> u64 {
        let cached = self.counts.len();
        let stale =
            messages.len() < cached || (cached > 0 && messages[cached - 1].text().map_or(0, str::len) != self.last_len);
        if stale {
            self.reset();
        }
        for m in &messages[self.counts.len()..] {
            let n = estimator.count_message(m);
            self.counts.push(n);
            self.total += n;
        }
        self.last_len = messages.last().and_then(Message::text).map_or(0, str::len);
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_estimate_is_words_plus_four_per_message() {
        let m = [Message::user("add two and two"), Message::assistant_text("four")];
        let total: u64 = m.iter().map(|x| WordsEstimator.count_message(x)).sum();
        assert_eq!(total, (4 + 4) + (1 + 4));
    }

    #[test]
    fn bpe_counts_real_tokens_by_model_family() {
        assert_eq!(BpeEstimator::for_model("gpt-4.1-mini").encoding(), Encoding::O200kBase);
        assert_eq!(BpeEstimator::for_model("openai:gpt-4").encoding(), Encoding::Cl100kBase);
        assert_eq!(BpeEstimator::for_model("anthropic:claude-sonnet-4-5").encoding(), Encoding::Cl100kBase);
        let n = BpeEstimator::new(Encoding::Cl100kBase).count_text("hello world");
        assert_eq!(n, 2);
    }

    #[test]
    fn cache_counts_only_new_messages_and_resets_when_the_transcript_changes() {
        struct Counting(std::sync::atomic::AtomicU64);
        impl TokenEstimator for Counting {
            fn name(&self) -> &'static str {
                "counting"
            }
            fn count_text(&self, t: &str) -> u64 {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                t.len() as u64
            }
        }
        let est = Counting(Default::default());
        let mut cache = TokenCache::new();
        let mut msgs = vec![Message::user("aaaa"), Message::assistant_text("bb")];
        assert_eq!(cache.estimate(&est, &msgs), 4 + 4 + 2 + 4);
        msgs.push(Message::user("c"));
        assert_eq!(cache.estimate(&est, &msgs), 14 + 5);
        assert_eq!(est.0.load(std::sync::atomic::Ordering::SeqCst), 3, "only the new message was counted");
        msgs.truncate(1);
        assert_eq!(cache.estimate(&est, &msgs), 8, "a shorter transcript resets the cache");
    }
}
