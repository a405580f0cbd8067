//! The default store: conversations in memory, for the life of the store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::lock::Held;
use super::{ConversationStore, PendingRun, RunLock, StoreFuture, StoredRun};

/// Keeps conversations in memory, for the life of the store; what it hands out are copies.
/// Records pending runs and locks conversations, like every built-in store.
#[derive(Default)]
pub struct InMemoryConversationStore {
    runs: Mutex<HashMap<String, StoredRun>>,
    held: Arc<Held>,
}

impl InMemoryConversationStore {
    /// An empty store.
    pub fn new() -> InMemoryConversationStore {
        InMemoryConversationStore::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, StoredRun>) -> T) -> T {
        f(&mut self.runs.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl ConversationStore for InMemoryConversationStore {
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<Value>>> {
        let found = self.with(|runs| runs.get(id).map(|r| r.messages.clone()));
        Box::pin(async move { Ok(found) })
    }

    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> StoreFuture<'a, ()> {
        self.with(|runs| runs.insert(id.to_string(), StoredRun::transcript(messages)));
        Box::pin(async { Ok(()) })
    }

    fn kind(&self) -> &'static str {
        "memory"
    }

    fn records_runs(&self) -> bool {
        true
    }

    fn lock<'a>(&'a self, id: &'a str) -> StoreFuture<'a, RunLock> {
        let taken = self.held.take(id);
        Box::pin(async move { taken })
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredRun>> {
        let found = self.with(|runs| runs.get(id).cloned());
        Box::pin(async move { Ok(found) })
    }

    fn store<'a>(&'a self, id: &'a str, run: StoredRun) -> StoreFuture<'a, ()> {
        self.with(|runs| runs.insert(id.to_string(), run));
        Box::pin(async { Ok(()) })
    }

    fn pending_runs(&self) -> StoreFuture<'_, Vec<PendingRun>> {
        let mut pending: Vec<PendingRun> = self.with(|runs| {
            runs.iter()
                .filter_map(|(id, r)| {
                    let request = r.pending.clone()?;
                    Some(PendingRun { id: id.clone(), request, since_ms: r.since_ms.unwrap_or(0) })
                })
                .collect()
        });
        pending.sort_by(|a, b| a.since_ms.cmp(&b.since_ms).then_with(|| a.id.cmp(&b.id)));
        Box::pin(async move { Ok(pending) })
    }
}
