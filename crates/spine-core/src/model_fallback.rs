//! [`FallbackModel`]: a model client that moves on to its fallback models, in order, when the
//! current one is overloaded or unavailable (`--fallback-model`).
//!
//! Contract:
//! - A request goes to the current model (the main one until a switch). When it fails with
//!   HTTP 529 (overloaded) or 503 (unavailable) — after the retries the client itself makes —
//!   and a fallback model remains, the client switches to the next one, tells the request's
//!   sink ([`StreamSink::fallback`]) and sends the same request to it at once. Any other error,
//!   or the last model's, is the request's error.
//! - The switch holds for every later request made through this client: the rest of the run
//!   (and of an interactive or driven session, whose runs share the client). The main model
//!   is not tried again.
//! - [`ModelClient::model`], the context window and the price are the current model's, so a
//!   reply's usage and cost are booked to the model that served it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use spine_protocol::message::ReasoningEffort;
use spine_protocol::run::Usage;
use tokio_util::sync::CancellationToken;

use crate::model::{ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink};
use crate::model_reasoning::ReasoningFlags;

/// The main model, then its fallbacks (see the module documentation).
pub struct FallbackModel {
    /// The main model first; never empty.
    models: Vec<Arc<dyn ModelClient>>,
    /// The index of the model serving requests now.
    current: AtomicUsize,
}

impl std::fmt::Debug for FallbackModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.models.iter().map(|m| m.model()).collect();
        f.debug_struct("FallbackModel").field("models", &names).field("current", &self.index()).finish()
    }
}

impl FallbackModel {
    /// `main`, falling back to `fallbacks` in order.
    pub fn new(main: Arc<dyn ModelClient>, fallbacks: Vec<Arc<dyn ModelClient>>) -> Self {
        let mut models = Vec::with_capacity(fallbacks.len() + 1);
        models.push(main);
        models.extend(fallbacks);
        FallbackModel { models, current: AtomicUsize::new(0) }
    }

    /// Whether `error` moves a request to the next model: the server said the model is
    /// overloaded (529) or unavailable (503).
    pub fn switches_on(error: &ModelError) -> bool {
        matches!(error.kind, ModelErrorKind::Http { status: 503 | 529 })
    }

    fn index(&self) -> usize {
        self.current.load(Ordering::SeqCst).min(self.models.len() - 1)
    }

    fn current(&self) -> &Arc<dyn ModelClient> {
        &self.models[self.index()]
    }

    /// Each model mapped by `f`; `None` when the main model maps to `None` (a fallback that
    /// does stays as it is). The current model is kept.
    fn mapped(
        &self,
        f: impl Fn(&Arc<dyn ModelClient>) -> Option<Arc<dyn ModelClient>>,
    ) -> Option<Arc<dyn ModelClient>> {
        let main = f(&self.models[0])?;
        let fallbacks = self.models[1..].iter().map(|m| f(m).unwrap_or_else(|| Arc::clone(m))).collect();
        let mapped = FallbackModel::new(main, fallbacks);
        mapped.current.store(self.index(), Ordering::SeqCst);
        Some(Arc::new(mapped))
    }
}

#[async_trait]
impl ModelClient for FallbackModel {
    fn model(&self) -> &str {
        self.current().model()
    }

    fn context_window(&self) -> Option<u64> {
        self.current().context_window()
    }

    fn cost_usd(&self, usage: &Usage) -> Option<f64> {
        self.current().cost_usd(usage)
    }

    fn api_key_source(&self) -> &str {
        self.current().api_key_source()
    }

    fn with_reasoning_effort(&self, effort: ReasoningEffort) -> Option<Arc<dyn ModelClient>> {
        self.mapped(|m| m.with_reasoning_effort(effort))
    }

    fn with_reasoning_flags(&self, flags: &ReasoningFlags) -> Option<Arc<dyn ModelClient>> {
        self.mapped(|m| m.with_reasoning_flags(flags))
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        stream: &dyn StreamSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        loop {
            let index = self.index();
            let model = &self.models[index];
            let error = match model.complete(request, stream, cancel).await {
                Ok(reply) => return Ok(reply),
                Err(error) => error,
            };
            let next = index + 1;
            if !Self::switches_on(&error) || next >= self.models.len() || cancel.is_cancelled() {
                return Err(error);
            }
            // Concurrent requests (parallel subagents) may fail together: one switches and
            // reports it, the others follow to whichever model is current.
            if self.current.compare_exchange(index, next, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                stream.fallback(model.model(), self.models[next].model(), &error);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use spine_protocol::message::AssistantMessage;

    use super::*;
    use crate::model::{FinishReason, NoStream};

    /// Answers with its name, or fails with `status`.
    struct Fixed {
        name: &'static str,
        status: Option<u16>,
        calls: Mutex<u32>,
    }

    impl Fixed {
        fn new(name: &'static str, status: Option<u16>) -> Arc<Fixed> {
            Arc::new(Fixed { name, status, calls: Mutex::new(0) })
        }

        fn calls(&self) -> u32 {
            *self.calls.lock().expect("lock")
        }
    }

    #[async_trait]
    impl ModelClient for Fixed {
        fn model(&self) -> &str {
            self.name
        }

        async fn complete(
            &self,
            _request: ModelRequest<'_>,
            _stream: &dyn StreamSink,
            _cancel: &CancellationToken,
        ) -> Result<ModelReply, ModelError> {
            *self.calls.lock().expect("lock") += 1;
            match self.status {
                Some(status) => Err(ModelError::new(ModelErrorKind::Http { status }, format!("{status}"))),
                None => Ok(ModelReply {
                    message: AssistantMessage { content: Some(self.name.to_owned()), ..Default::default() },
                    finish_reason: FinishReason::Stop,
                    usage: None,
                }),
            }
        }
    }

    /// Records fallbacks.
    #[derive(Default)]
    struct Switches(Mutex<Vec<(String, String)>>);

    impl StreamSink for Switches {
        fn text_delta(&self, _text: &str) {}

        fn fallback(&self, from: &str, to: &str, _error: &ModelError) {
            self.0.lock().expect("lock").push((from.to_owned(), to.to_owned()));
        }
    }

    fn request() -> ModelRequest<'static> {
        ModelRequest { messages: &[], tools: &[], stable_prefix: None }
    }

    async fn answer(client: &FallbackModel, sink: &dyn StreamSink) -> Result<String, ModelErrorKind> {
        client
            .complete(request(), sink, &CancellationToken::new())
            .await
            .map(|r| r.message.content.unwrap_or_default())
            .map_err(|e| e.kind)
    }

    #[tokio::test]
    async fn an_overloaded_main_model_switches_to_the_fallback_for_the_rest_of_the_run() {
        let main = Fixed::new("main", Some(529));
        let fallback = Fixed::new("fallback", None);
        let client = FallbackModel::new(main.clone(), vec![fallback.clone()]);
        let sink = Switches::default();
        assert_eq!(answer(&client, &sink).await, Ok("fallback".to_owned()));
        assert_eq!(client.model(), "fallback");
        assert_eq!(answer(&client, &sink).await, Ok("fallback".to_owned()));
        assert_eq!(main.calls(), 1, "the main model is not tried again");
        assert_eq!(*sink.0.lock().expect("lock"), vec![("main".to_owned(), "fallback".to_owned())]);
    }

    #[tokio::test]
    async fn an_unavailable_model_moves_on_in_order_and_the_last_ones_error_stands() {
        let client = FallbackModel::new(
            Fixed::new("main", Some(503)),
            vec![Fixed::new("second", Some(529)), Fixed::new("third", Some(503))],
        );
        assert_eq!(answer(&client, &NoStream).await, Err(ModelErrorKind::Http { status: 503 }));
        assert_eq!(client.model(), "third");
    }

    #[tokio::test]
    async fn other_errors_do_not_switch() {
        let fallback = Fixed::new("fallback", None);
        let client = FallbackModel::new(Fixed::new("main", Some(400)), vec![fallback.clone()]);
        assert_eq!(answer(&client, &NoStream).await, Err(ModelErrorKind::Http { status: 400 }));
        assert_eq!(fallback.calls(), 0);
        assert_eq!(client.model(), "main");
    }
}
