//! Token estimates, cheap enough to run before every model request.
//!
//! [`TokenEstimator`] counts one text. Two estimators: [`WordsEstimator`], the simplest
//! (whitespace-separated words), and [`BpeEstimator`], a real BPE tokenizer of the model family
//! (`tiktoken-rs`, offline): `o200k_base` for GPT-4o/4.1/5 and o-series models, `cl100k_base`
//! for older OpenAI models and as a documented approximation for Anthropic models (whose
//! tokenizer is not public; cl100k counts are typically within ~10–20% of Claude's).
//!
//! Every message costs its text plus 4 tokens of framing, plus its images: `width * height /
//! 750` tokens each (Anthropic's formula), or a fixed 1600 when the size is unknown — the
//! base64 data is never counted as text. The tool definitions a request
//! carries count too ([`count_tools`]): each tool's serialized JSON (name, description, input
//! schema) plus 4 of framing — with a few dozen tools they are often most of a short request.
//! [`TokenCache`] keeps per-message counts (and the tools' count) so that a request only
//! counts what is new since the last one.
//!
//! Memory and time stay proportional to the text: the BPE never sees more than a bounded piece
//! at once. Text is handed to it in chunks of about [`CHUNK_BYTES`], cut only where no
//! pre-token of either encoding can span the cut (between a non-whitespace character and a
//! following space or tab, or between a line break and a following non-whitespace character),
//! so the count of ordinary text is exact. A run of non-whitespace (or of whitespace) longer
//! than [`MAX_RUN_BYTES`] — base64, minified data, one huge "word" — is cut every
//! [`MAX_RUN_BYTES`] bytes: one "word" of megabytes would otherwise cost the BPE merge ~56
//! bytes of state per byte and seconds of heap work, and the count of such a run is off by at
//! most one token per cut. Text with no safe cut in [`MAX_CHUNK_BYTES`] is cut there anyway.

use std::sync::Arc;

use spine_protocol::message::Message;
use spine_protocol::tool::ToolSpec;

/// Counts tokens of a text.
pub trait TokenEstimator: Send + Sync {
    /// The estimator's name, for traces (`words`, `o200k_base`, `cl100k_base`).
    fn name(&self) -> &'static str;
    /// Tokens in a text.
    fn count_text(&self, text: &str) -> u64;
    /// Tokens of a message: its text (and tool-call arguments) plus 4 of framing, plus its
    /// images ([`ImageBlock::estimated_tokens`](spine_protocol::message::ImageBlock::estimated_tokens)).
    fn count_message(&self, message: &Message) -> u64 {
        let mut n = 4 + message.text().map_or(0, |t| self.count_text(t));
        n += message.images().iter().map(|i| i.estimated_tokens() as u64).sum::<u64>();
        if let Message::Assistant(a) = message {
            for call in &a.tool_calls {
                n += self.count_text(&call.name) + self.count_text(&call.arguments.to_wire());
            }
        }
        n
    }
}

/// The simplest estimate: whitespace-separated words.
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

    /// Whether `model` is an OpenAI model whose tokenizer is one of the encodings (the count is
    /// then exact): `gpt-*`, `chatgpt-*`, the o-series, `text-embedding-*`.
    pub fn is_exact_for(model: &str) -> bool {
        let m = model.rsplit([':', '/']).next().unwrap_or(model).to_ascii_lowercase();
        ["gpt-", "chatgpt", "o1", "o3", "o4", "text-embedding-"].iter().any(|p| m.starts_with(p))
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

    /// The BPE vocabulary this estimator counts with (`o200k_base` or `cl100k_base`).
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

/// Runs of one class (whitespace or not) longer than this are cut into pieces of this size.
pub const MAX_RUN_BYTES: usize = 1024;
/// Ordinary text goes to the BPE in chunks of about this size, cut where the count stays exact.
pub const CHUNK_BYTES: usize = 64 * 1024;
/// A chunk with no exact cut is cut at this size.
pub const MAX_CHUNK_BYTES: usize = 256 * 1024;

/// The bounds of the pieces handed to the BPE.
#[derive(Debug, Clone, Copy)]
struct PieceLimits {
    run: usize,
    chunk: usize,
    max_chunk: usize,
}

const LIMITS: PieceLimits = PieceLimits { run: MAX_RUN_BYTES, chunk: CHUNK_BYTES, max_chunk: MAX_CHUNK_BYTES };

/// Calls `each` with consecutive pieces of `text` (together, the whole text), each at most
/// `max_chunk` bytes plus one character, and no run of one class longer than `run` bytes.
fn for_each_piece(text: &str, limits: PieceLimits, mut each: impl FnMut(&str)) {
    let mut chunk_start = 0;
    let mut run_start = 0;
    let mut prev: Option<char> = None;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        let mut cut = false;
        if let Some(p) = prev {
            let prev_space = p.is_whitespace();
            if prev_space == space {
                cut = i - run_start.max(chunk_start) >= limits.run;
            } else {
                run_start = i;
                // No pre-token spans a word followed by a space or tab, nor a line break
                // followed by a word.
                let exact = if space { c != '\r' && c != '\n' } else { p == '\r' || p == '\n' };
                cut = exact && i - chunk_start >= limits.chunk;
            }
            cut |= i - chunk_start >= limits.max_chunk;
        }
        if cut {
            each(&text[chunk_start..i]);
            chunk_start = i;
        }
        prev = Some(c);
    }
    if chunk_start < text.len() {
        each(&text[chunk_start..]);
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
        if text.len() <= MAX_RUN_BYTES {
            return bpe.encode_ordinary(text).len() as u64;
        }
        let mut n = 0;
        for_each_piece(text, LIMITS, |piece| n += bpe.encode_ordinary(piece).len() as u64);
        n
    }
}

/// The default estimator for a model: the BPE of an OpenAI model family, where it is exact;
/// words for any other model (Claude, local models, the scripted model), whose tokenizer spine
/// does not have: the runner anchors their estimates on the provider's reported counts
/// ([`TokenCache::anchor`]), so no OpenAI table is loaded for them.
pub fn estimator_for(model: Option<&str>) -> Arc<dyn TokenEstimator> {
    match model {
        Some(m) if BpeEstimator::is_exact_for(m) => Arc::new(BpeEstimator::for_model(m)),
        _ => Arc::new(WordsEstimator),
    }
}

/// Tokens of the tool definitions a request carries: each tool's JSON as serialized (name,
/// description, input schema), plus 4 of framing per tool.
pub fn count_tools(estimator: &dyn TokenEstimator, tools: &[ToolSpec]) -> u64 {
    tools.iter().map(|t| 4 + estimator.count_text(&tool_json(t))).sum()
}

fn tool_json(tool: &ToolSpec) -> String {
    serde_json::json!({"name": tool.name, "description": tool.description, "input_schema": tool.input_schema})
        .to_string()
}

/// The estimate of a request's transcript and of its tool definitions, through `cache` when
/// there is one (only what is new is counted).
pub fn estimate_request(
    estimator: &dyn TokenEstimator,
    transcript: &[Message],
    tools: &[ToolSpec],
    cache: Option<&mut TokenCache>,
) -> RequestEstimate {
    match cache {
        Some(cache) => {
            let transcript_tokens = cache.estimate(estimator, transcript);
            let tool_tokens = cache.estimate_tools(estimator, tools);
            RequestEstimate { transcript_tokens, tool_tokens, anchored: cache.anchored(transcript.len()) }
        }
        None => RequestEstimate {
            transcript_tokens: transcript.iter().map(|m| estimator.count_message(m)).sum(),
            tool_tokens: count_tools(estimator, tools),
            anchored: None,
        },
    }
}

/// The parts of a request's estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestEstimate {
    /// The transcript, by the estimator.
    pub transcript_tokens: u64,
    /// The tool definitions, by the estimator.
    pub tool_tokens: u64,
    /// The whole request from the provider's count of the last one ([`TokenCache::anchor`]):
    /// its input and output tokens, plus the estimator's count of the messages added since.
    pub anchored: Option<u64>,
}

/// What the provider counted for a request ([`TokenCache::anchor`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Anchor {
    /// The request's input tokens (cached ones included) and its reply's output tokens.
    tokens: u64,
    /// How many transcript messages the request and its reply cover.
    messages: usize,
}

/// Per-message counts of an append-only transcript: each request counts only the messages
/// added since the previous one. [`TokenCache::reset`] after anything rewrites the transcript
/// (compaction); a shrunk transcript or a changed last message also resets it.
#[derive(Debug, Clone, Default)]
pub struct TokenCache {
    counts: Vec<u64>,
    last_len: usize,
    total: u64,
    /// The tools' count, with a hash of their JSON (the tools rarely change within a run).
    tools: Option<(u64, u64)>,
    /// The provider's count of the last request.
    anchor: Option<Anchor>,
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

    /// [`count_tools`], counted again only when the tools' JSON changed.
    pub fn estimate_tools(&mut self, estimator: &dyn TokenEstimator, tools: &[ToolSpec]) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for t in tools {
            tool_json(t).hash(&mut hasher);
        }
        let key = hasher.finish();
        match self.tools {
            Some((k, n)) if k == key => n,
            _ => {
                let n = count_tools(estimator, tools);
                self.tools = Some((key, n));
                n
            }
        }
    }

    /// Records what the provider counted for a request: `tokens` (its input tokens, cached ones
    /// included, plus its reply's output tokens) covering the first `messages` messages of the
    /// transcript (the request's and the reply). Later estimates are that count plus the
    /// estimator's count of what was added since ([`RequestEstimate::anchored`]): exact for the
    /// prefix, whatever the estimator, so no tokenizer table is needed for a model whose
    /// tokenizer spine does not have. Forgotten when the transcript is rewritten.
    pub fn anchor(&mut self, tokens: u64, messages: usize) {
        self.anchor = Some(Anchor { tokens, messages });
    }

    /// The anchored estimate of a transcript of `len` messages just [`estimate`](Self::estimate)d.
    fn anchored(&self, len: usize) -> Option<u64> {
        let anchor = self.anchor.filter(|a| a.messages <= len && len == self.counts.len())?;
        Some(anchor.tokens + self.counts[anchor.messages..].iter().sum::<u64>())
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
    fn bpe_only_for_openai_families_and_words_for_claude_and_local_models() {
        for (model, name) in [
            ("gpt-4.1-mini", "o200k_base"),
            ("openai:gpt-4", "cl100k_base"),
            ("openai-responses:o3", "o200k_base"),
            ("anthropic:claude-sonnet-4-5", "words"),
            ("openai:qwen2.5-7b-instruct", "words"),
            ("scripted", "words"),
        ] {
            assert_eq!(estimator_for(Some(model)).name(), name, "{model}");
        }
    }

    #[test]
    fn an_anchored_estimate_is_the_providers_count_plus_the_new_messages() {
        let mut cache = TokenCache::new();
        let mut t = vec![Message::user("add two and two"), Message::assistant_text("four")];
        let first = estimate_request(&WordsEstimator, &t, &[], Some(&mut cache));
        assert_eq!(first.anchored, None, "nothing counted by the provider yet");
        cache.anchor(1000, 2);
        t.push(Message::user("and three more"));
        let next = estimate_request(&WordsEstimator, &t, &[], Some(&mut cache));
        assert_eq!(next.anchored, Some(1000 + WordsEstimator.count_message(&t[2])));
        cache.reset();
        assert_eq!(estimate_request(&WordsEstimator, &t, &[], Some(&mut cache)).anchored, None, "reset forgets it");
        cache.anchor(1000, 3);
        let shrunk = estimate_request(&WordsEstimator, &t[..1], &[], Some(&mut cache));
        assert_eq!(shrunk.anchored, None, "a rewritten transcript drops the anchor");
    }

    #[test]
    fn an_image_counts_by_its_area_or_a_fixed_count_never_by_its_base64() {
        use spine_protocol::message::ImageBlock;
        let sized = ImageBlock { width: Some(750), height: Some(100), ..ImageBlock::new("image/png", "a b c d") };
        let unknown = ImageBlock::new("image/png", "x ".repeat(50_000));
        let m = Message::user_with_images("look", vec![sized, unknown]);
        assert_eq!(WordsEstimator.count_message(&m), 1 + 4 + 100 + 1600);
        let bpe = BpeEstimator::new(Encoding::Cl100kBase);
        assert_eq!(bpe.count_message(&m), bpe.count_message(&Message::user("look")) + 100 + 1600);
    }

    #[test]
    fn bpe_counts_real_tokens_by_model_family() {
        assert_eq!(BpeEstimator::for_model("gpt-4.1-mini").encoding(), Encoding::O200kBase);
        assert_eq!(BpeEstimator::for_model("openai:gpt-4").encoding(), Encoding::Cl100kBase);
        assert_eq!(BpeEstimator::for_model("anthropic:claude-sonnet-4-5").encoding(), Encoding::Cl100kBase);
        let n = BpeEstimator::new(Encoding::Cl100kBase).count_text("hello world");
        assert_eq!(n, 2);
    }

    fn mixed_text(bytes: usize) -> String {
        let para = "The quick brown fox jumps over the lazy dog; fn main() { println!(\"{}\", 42); }\n\
                    \tlet spine = Runtime::new(hooks, tools).await?;  // comments, code   and prose 你好 🌍\n\n\
                    It's 3.14159 they've said!\r\n    indented  line\n";
        para.repeat(bytes / para.len() + 1)
    }

    #[test]
    fn pieces_cover_the_text_and_bound_every_run() {
        let limits = PieceLimits { run: 16, chunk: 64, max_chunk: 256 };
        let text = format!("{}{}{}", mixed_text(2000), "x".repeat(1000), " ".repeat(300));
        let mut joined = String::new();
        let mut longest_run = 0;
        for_each_piece(&text, limits, |p| {
            assert!(p.len() <= 256 + 4, "piece of {} bytes", p.len());
            longest_run = longest_run.max(p.split_whitespace().map(str::len).max().unwrap_or(0));
            joined.push_str(p);
        });
        assert_eq!(joined, text);
        assert!(longest_run <= 16, "a run of {longest_run} bytes reached the BPE");
    }

    #[test]
    fn chunked_bpe_count_of_ordinary_text_is_exact() {
        let limits = PieceLimits { run: 1024, chunk: 64, max_chunk: 1 << 20 };
        let text = mixed_text(20_000);
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let bpe = match enc {
                Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            };
            let whole = bpe.encode_ordinary(&text).len() as u64;
            let mut pieces = 0;
            let mut chunked = 0;
            for_each_piece(&text, limits, |p| {
                pieces += 1;
                chunked += bpe.encode_ordinary(p).len() as u64;
            });
            assert!(pieces > 100, "the text was cut ({pieces} pieces)");
            assert_eq!(chunked, whole, "{enc:?}");
            assert_eq!(BpeEstimator::new(enc).count_text(&text), whole, "{enc:?}");
        }
    }

    #[test]
    fn an_unbroken_word_is_counted_in_bounded_pieces_within_one_token_per_cut() {
        let word: String = (0..64 * 1024).map(|i: usize| char::from(b'a' + ((i * 7 + i / 26) % 26) as u8)).collect();
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let bpe = match enc {
                Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            };
            let exact = bpe.encode_ordinary(&word).len() as u64;
            let n = BpeEstimator::new(enc).count_text(&word);
            let cuts = (word.len() / MAX_RUN_BYTES) as u64;
            assert!(n.abs_diff(exact) <= cuts, "{enc:?}: {n} vs exact {exact} with {cuts} cuts");
        }
    }

    #[test]
    fn the_token_estimate_includes_the_tool_schemas() {
        let tool = ToolSpec {
            name: "calculator".into(),
            description: "Evaluates an arithmetic expression".into(),
            input_schema: serde_json::json!({"type": "object", "properties": {"expression": {"type": "string"}}}),
        };
        let json = r#"{"name":"calculator","description":"Evaluates an arithmetic expression","input_schema":{"type":"object","properties":{"expression":{"type":"string"}}}}"#;
        let bpe = BpeEstimator::new(Encoding::O200kBase);
        let one = 4 + bpe.count_text(json);
        assert_eq!(count_tools(&bpe, std::slice::from_ref(&tool)), one);
        assert_eq!(count_tools(&bpe, &[tool.clone(), tool.clone()]), 2 * one);
        let mut cache = TokenCache::new();
        assert_eq!(cache.estimate_tools(&bpe, std::slice::from_ref(&tool)), one);
        assert_eq!(cache.estimate_tools(&bpe, &[]), 0, "changed tools are counted again");
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
