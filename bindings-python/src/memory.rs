//! Conversation stores: the engine's own (`_native.ConversationStore`, behind the package's
//! `InMemoryConversationStore` and `SqliteConversationStore`) and the host's (any object with
//! `get` and `save`, sync or async).

use std::sync::Arc;

use engine::memory::{ConversationStore, InMemoryConversationStore, SqliteConversationStore, StoreFuture};
use engine::Error;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use serde_json::Value;

use crate::bridge::{call_py, runtime};
use crate::convert::{from_py, to_py};
use crate::error::{self, PyHostError};
use crate::host::bridge_fn;

/// One of the engine's stores.
#[pyclass(frozen, module = "toolnexus._native", name = "ConversationStore")]
pub struct PyStore {
    pub inner: Arc<dyn ConversationStore>,
}

impl PyStore {
    /// Runs `fut` to its end on the engine's runtime, without the GIL.
    fn wait<T: Send>(py: Python<'_>, fut: StoreFuture<'_, T>) -> PyResult<T> {
        let rt = runtime()?;
        let r = py.detach(|| rt.block_on(fut));
        error::map(py, r)
    }
}

#[pymethods]
impl PyStore {
    /// An in-memory store.
    #[staticmethod]
    fn memory() -> PyStore {
        PyStore { inner: Arc::new(InMemoryConversationStore::new()) }
    }

    /// The SQLite store at `path`.
    #[staticmethod]
    fn sqlite(py: Python<'_>, path: String) -> PyResult<PyStore> {
        let store = error::map(py, SqliteConversationStore::open(path))?;
        Ok(PyStore { inner: Arc::new(store) })
    }

    /// The PostgreSQL store at `url` (connected on first use).
    #[staticmethod]
    fn postgres(py: Python<'_>, url: &str) -> PyResult<PyStore> {
        let store = error::map(py, engine::memory::PostgresConversationStore::open(url))?;
        Ok(PyStore { inner: Arc::new(store) })
    }

    /// `"memory"`, `"sqlite"`, `"postgres"` or `"host"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    /// The transcript of `id`, or `None`.
    fn get(&self, py: Python<'_>, id: &str) -> PyResult<Py<PyAny>> {
        match Self::wait(py, self.inner.get(id))? {
            Some(m) => to_py(py, &Value::Array(m)).map(Bound::unbind),
            None => Ok(py.None()),
        }
    }

    /// Replaces the transcript of `id`.
    fn save(&self, py: Python<'_>, id: &str, messages: Bound<'_, PyAny>) -> PyResult<()> {
        let Value::Array(m) = from_py(&messages)? else {
            return Err(pyo3::exceptions::PyTypeError::new_err("toolnexus: messages must be a list of message dicts"));
        };
        Self::wait(py, self.inner.save(id, m))
    }

    /// Every conversation waiting on a request: `[{"id", "request", "since_ms"}]`, oldest first.
    fn pending_runs(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let runs = Self::wait(py, self.inner.pending_runs())?;
        to_py(py, &Value::Array(runs.iter().map(|r| r.to_json()).collect())).map(Bound::unbind)
    }
}

/// A host's store: `_bridge.store_get(store, id)` and `_bridge.store_save(store, id, messages)`
/// on the run's loop.
pub struct PyHostStore {
    pub store: Py<PyAny>,
}

impl PyHostStore {
    async fn call(&self, name: &'static str, id: &str, messages: Option<Vec<Value>>) -> Result<Value, Error> {
        let (func, args) = Python::attach(|py| -> PyResult<_> {
            let mut items = vec![self.store.clone_ref(py).into_bound(py), PyString::new(py, id).into_any()];
            if let Some(m) = &messages {
                items.push(to_py(py, &Value::Array(m.clone()))?);
            }
            Ok((bridge_fn(py, name)?, PyTuple::new(py, items)?.unbind()))
        })
        .map_err(|e| Python::attach(|py| PyHostError::wrap(py, e)))?;
        let out = call_py(func, args).await?;
        Python::attach(|py| {
            let out = out.bind(py);
            if out.is_none() || out.is_instance_of::<PyList>() || name == "store_save" {
                return from_py(out).map_err(|e| PyHostError::wrap(py, e));
            }
            // A tuple or another sequence of messages reads as a list, as upstream's `or []` does.
            let listed = py.import("builtins").and_then(|b| b.getattr("list")).and_then(|l| l.call1((out,)));
            listed.and_then(|l| from_py(&l)).map_err(|e| PyHostError::wrap(py, e))
        })
    }
}

impl ConversationStore for PyHostStore {
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<Value>>> {
        Box::pin(async move {
            match self.call("store_get", id, None).await? {
                Value::Null => Ok(None),
                Value::Array(m) => Ok(Some(m)),
                _ => Err(Error::host("toolnexus: the store's get() must return a list of messages or None".into())),
            }
        })
    }

    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> StoreFuture<'a, ()> {
        Box::pin(async move { self.call("store_save", id, Some(messages)).await.map(|_| ()) })
    }
}
