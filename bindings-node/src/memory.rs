//! Conversation stores: the engine's own (`_EngineStore`, behind `index.js`'s
//! `InMemoryConversationStore` and `SqliteConversationStore`) and the host's (an object with
//! `get(id)` and `save(id, messages)`, answering values or Promises).

use std::sync::Arc;

use engine::memory::{ConversationStore, InMemoryConversationStore, SqliteConversationStore, StoreFuture};
use napi::bindgen_prelude::{ClassInstance, FnArgs, Function, JsObjectValue, Object, PromiseRaw};
use napi::Env;
use napi_derive::napi;
use serde_json::Value;

use crate::call::{call, callback, Callback, MaybePromise};
use crate::convert::Json;
use crate::error::{throw, to_js};
use crate::keepalive;

/// One of the engine's stores (wrapped by `InMemoryConversationStore` and
/// `SqliteConversationStore`).
#[napi(js_name = "_EngineStore")]
pub struct EngineStore {
    pub(crate) inner: Arc<dyn ConversationStore>,
}

/// A conversation waiting on a request.
#[napi(object, object_from_js = false)]
pub struct PendingRun {
    /// The conversation id.
    pub id: String,
    /// What the run waits on.
    #[napi(ts_type = "Request")]
    pub request: Json,
    /// Since when, in milliseconds since the epoch.
    pub since_ms: f64,
}

#[napi]
impl EngineStore {
    /// An in-memory store.
    #[napi(factory)]
    pub fn memory() -> EngineStore {
        EngineStore { inner: Arc::new(InMemoryConversationStore::new()) }
    }

    /// The SQLite store at `path` (created when missing).
    #[napi(factory)]
    pub fn sqlite(env: &Env, path: String) -> napi::Result<EngineStore> {
        let store = SqliteConversationStore::open(path).map_err(|e| throw(env, e))?;
        Ok(EngineStore { inner: Arc::new(store) })
    }

    /// The PostgreSQL store at `url` (connected on first use).
    #[napi(factory)]
    pub fn postgres(env: &Env, url: String) -> napi::Result<EngineStore> {
        let store = engine::memory::PostgresConversationStore::open(&url).map_err(|e| throw(env, e))?;
        Ok(EngineStore { inner: Arc::new(store) })
    }

    /// `"memory"`, `"sqlite"`, `"postgres"` or `"host"`.
    #[napi(getter)]
    pub fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    /// The transcript of `id`, or `undefined`.
    #[napi(ts_return_type = "Promise<any[] | undefined>")]
    pub fn get<'e>(&self, env: &'e Env, id: String) -> napi::Result<PromiseRaw<'e, Option<Json>>> {
        let store = self.inner.clone();
        let work = async move { store.get(&id).await };
        keepalive::spawn(env, keepalive::next_id(), work, |env, r| match r {
            Ok(m) => Ok(m.map(|m| Json(Value::Array(m)))),
            Err(e) => Err(to_js(env, e, None)),
        })
    }

    /// Replaces the transcript of `id`.
    #[napi(ts_args_type = "id: string, messages: any[]", ts_return_type = "Promise<void>")]
    pub fn save<'e>(&self, env: &'e Env, id: String, messages: Json) -> napi::Result<PromiseRaw<'e, ()>> {
        let Value::Array(m) = messages.0 else {
            return Err(throw(env, crate::error::invalid("save: messages must be an array")));
        };
        let store = self.inner.clone();
        let work = async move { store.save(&id, m).await };
        keepalive::spawn(env, keepalive::next_id(), work, |env, r| r.map_err(|e| to_js(env, e, None)))
    }

    /// Every conversation waiting on a request, oldest first.
    #[napi(ts_return_type = "Promise<PendingRun[]>")]
    pub fn pending_runs<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, Vec<PendingRun>>> {
        let store = self.inner.clone();
        let work = async move { store.pending_runs().await };
        keepalive::spawn(env, keepalive::next_id(), work, |env, r| match r {
            Ok(runs) => Ok(runs
                .into_iter()
                .map(|r| PendingRun { id: r.id, request: Json(r.request.to_json()), since_ms: r.since_ms as f64 })
                .collect()),
            Err(e) => Err(to_js(env, e, None)),
        })
    }
}

/// `save(id, messages)`'s arguments.
type SaveArgs = FnArgs<(String, Json)>;

/// A host's store, through `get` and `save` functions `index.js` binds to it.
struct JsStore {
    get: Arc<Callback<String, Option<Json>>>,
    save: Arc<Callback<SaveArgs, Option<Json>>>,
}

impl ConversationStore for JsStore {
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<Value>>> {
        Box::pin(async move {
            match call(&self.get, id.to_string()).await? {
                None | Some(Json(Value::Null)) => Ok(None),
                Some(Json(Value::Array(m))) => Ok(Some(m)),
                Some(_) => Err(engine::Error::host("the store's get() must return an array of messages".into())),
            }
        })
    }

    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            call(&self.save, FnArgs::from((id.to_string(), Json(Value::Array(messages))))).await.map(|_| ())
        })
    }
}

/// The engine store for the `store` option `o` (`index.js` hands over an engine store's
/// handle, or `{get, save}` functions bound to the host's object; a path stays in the plain
/// options, for the engine to open).
pub fn store_of(o: &Object<'_>) -> napi::Result<Option<Arc<dyn ConversationStore>>> {
    if let Some(engine) = o.get_named_property::<Option<ClassInstance<EngineStore>>>("_engine")? {
        return Ok(Some(engine.inner.clone()));
    }
    let get: Option<Function<String, MaybePromise<Option<Json>>>> = o.get_named_property("get")?;
    let save: Option<Function<SaveArgs, MaybePromise<Option<Json>>>> = o.get_named_property("save")?;
    match (get, save) {
        (Some(get), Some(save)) => Ok(Some(Arc::new(JsStore { get: callback(get)?, save: callback(save)? }))),
        _ => Ok(None),
    }
}
