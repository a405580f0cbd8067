//! Reading a provider's JSON (a reply body, a streamed event) straight into the few fields the
//! loop uses, without building a `serde_json::Value` of the whole of it: the tree of maps was
//! most of the cost of reading a reply, and a stream has an event per delta.
//!
//! The rules are those of reading the text as a `Value` and asking it for fields: a field of
//! another type than expected reads as absent rather than failing, unknown fields are skipped,
//! the last of duplicate keys wins, and the whole text must still be JSON. One difference: a
//! skipped value is held to JSON's grammar only, not to every rule a parsed one is (a number
//! that overflows an `f64`, bytes that are not UTF-8 or a `\u` escape naming no character in a
//! string, all in a field the loop never reads).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A type read from whichever JSON value came. Each method answers for one kind of value;
/// what a type does not override reads as [`Lenient::otherwise`] (absent, unless the type
/// says so), and a container's contents are still read, so the JSON is still checked.
pub(crate) trait Lenient<'de>: Sized {
    /// A value of a kind this type is not read from.
    fn otherwise() -> Option<Self> {
        None
    }
    fn from_str(_: Cow<'de, str>) -> Option<Self> {
        Self::otherwise()
    }
    fn from_u64(_: u64) -> Option<Self> {
        Self::otherwise()
    }
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self::otherwise())
    }
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Self::otherwise())
    }
}

/// A field that is `None` when absent, `null`, or of another type.
pub(crate) struct Loose<T>(pub Option<T>);

impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose(None)
    }
}

impl<'de, T: Lenient<'de>> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LooseVisitor(PhantomData)).map(Loose)
    }
}

struct LooseVisitor<T>(PhantomData<T>);

impl<'de, T: Lenient<'de>> Visitor<'de> for LooseVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Option<T>, E> {
        Ok(T::otherwise())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Option<T>, E> {
        Ok(T::otherwise())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<T>, E> {
        Ok(T::otherwise())
    }
    fn visit_u64<E>(self, n: u64) -> Result<Option<T>, E> {
        Ok(T::from_u64(n))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Option<T>, E> {
        Ok(T::from_str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Option<T>, E> {
        Ok(T::from_str(Cow::Owned(s.to_owned())))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
        T::from_map(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<T>, A::Error> {
        T::from_seq(seq)
    }
}

impl<'de> Lenient<'de> for Cow<'de, str> {
    fn from_str(s: Cow<'de, str>) -> Option<Self> {
        Some(s)
    }
}

impl<'de> Lenient<'de> for u64 {
    fn from_u64(n: u64) -> Option<Self> {
        Some(n)
    }
}

/// Every element, each read as the element type reads it.
impl<'de, T: Deserialize<'de>> Lenient<'de> for Vec<T> {
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let mut all = Vec::with_capacity(seq.size_hint().unwrap_or(1));
        while let Some(x) = seq.next_element()? {
            all.push(x);
        }
        Ok(Some(all))
    }
}

/// The first element of an array, read as a [`Loose`] field reads it; the rest are skipped.
pub(crate) struct First<T>(pub Option<T>);

impl<'de, T: Lenient<'de>> Lenient<'de> for First<T> {
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let first = seq.next_element::<Loose<T>>()?.and_then(|l| l.0);
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Some(First(first)))
    }
}

/// An object kept whole (usage counts are passed on as the provider sent them).
impl<'de> Lenient<'de> for Map<String, Value> {
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        Map::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
    }
}

/// A field kept as whatever JSON it holds, `null` included (a present `null` still counts).
#[derive(Default)]
pub(crate) struct Present(pub Option<Value>);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|v| Present(Some(v)))
    }
}

/// A key, borrowed from the text (or from the parser's scratch, when escaped).
pub(crate) struct Key<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// An object read into a struct of `Loose` fields: each named key is read into its field (the
/// last of duplicates wins), every other key is skipped. Any other JSON value reads as absent,
/// or as the `otherwise` expression when one is given.
macro_rules! lenient_object {
    ($(#[$doc:meta])* struct $name:ident<$de:lifetime> { $($field:ident: $ty:ty = $key:literal,)* }
     $(otherwise $otherwise:expr)?) => {
        $(#[$doc])*
        #[derive(Default)]
        pub(crate) struct $name<$de> {
            $(pub $field: $ty,)*
            _text: ::std::marker::PhantomData<&$de str>,
        }

        impl<$de> $crate::client::lenient::Lenient<$de> for $name<$de> {
            $(fn otherwise() -> Option<Self> {
                $otherwise
            })?
            fn from_map<A: ::serde::de::MapAccess<$de>>(mut map: A) -> Result<Option<Self>, A::Error> {
                let mut out = Self::default();
                while let Some(key) = map.next_key::<$crate::client::lenient::Key>()? {
                    match key.0.as_ref() {
                        $($key => out.$field = map.next_value()?,)*
                        _ => {
                            map.next_value::<::serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(Some(out))
            }
        }
    };
}
pub(crate) use lenient_object;

lenient_object! {
    /// A provider's `error` field: any value but `null` is an error, with the object's
    /// `message` when it is text.
    struct ErrorField<'a> {
        message: Loose<Cow<'a, str>> = "message",
    }
    otherwise Some(Self::default())
}
