/* The tests' JSON value (see json.h): a tree of nodes, each container keeping its children
 * as a list in document order, since the order of members is what a printed request shows. */
#include "json.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tj {
  tj_type type;
  double number;
  char *string; /* TJ_STRING: `len` bytes plus a NUL */
  size_t len;
  char *key;            /* the member's name, when inside an object */
  tj *child, *last, *next;
};

/* Deep enough for any test document, shallow enough that recursion cannot exhaust the stack. */
#define TJ_MAX_DEPTH 512

static void *grab(size_t n) {
  void *p = malloc(n);
  if (p == NULL) { /* a test helper: running out of memory ends the test loudly */
    fputs("json.c: out of memory\n", stderr);
    abort();
  }
  return p;
}

static tj *node(tj_type type) {
  tj *v = grab(sizeof *v);
  memset(v, 0, sizeof *v);
  v->type = type;
  return v;
}

static char *copy_bytes(const char *s, size_t n) {
  char *c = grab(n + 1);
  memcpy(c, s, n);
  c[n] = 0;
  return c;
}

/* ---- building ---- */

tj *tj_null(void) { return node(TJ_NULL); }
tj *tj_bool(int b) { return node(b ? TJ_TRUE : TJ_FALSE); }
tj *tj_array(void) { return node(TJ_ARRAY); }
tj *tj_object(void) { return node(TJ_OBJECT); }

tj *tj_number(double d) {
  tj *v = node(TJ_NUMBER);
  v->number = d;
  return v;
}

static tj *string_n(const char *s, size_t n) {
  tj *v = node(TJ_STRING);
  v->string = copy_bytes(s, n);
  v->len = n;
  return v;
}

tj *tj_string(const char *s) { return s ? string_n(s, strlen(s)) : NULL; }

static void append(tj *parent, tj *item) {
  if (parent->last) parent->last->next = item;
  else parent->child = item;
  parent->last = item;
}

tj *tj_add(tj *object, const char *key, tj *item) {
  if (item == NULL) return NULL;
  if (object == NULL || object->type != TJ_OBJECT || key == NULL) {
    tj_free(item);
    return NULL;
  }
  free(item->key);
  item->key = copy_bytes(key, strlen(key));
  append(object, item);
  return item;
}

tj *tj_push(tj *array, tj *item) {
  if (item == NULL) return NULL;
  if (array == NULL || array->type != TJ_ARRAY) {
    tj_free(item);
    return NULL;
  }
  free(item->key);
  item->key = NULL;
  append(array, item);
  return item;
}

tj *tj_take(tj *array, int i) {
  if (array == NULL || i < 0) return NULL;
  tj *prev = NULL, *v = array->child;
  for (; v != NULL && i > 0; i--) {
    prev = v;
    v = v->next;
  }
  if (v == NULL) return NULL;
  if (prev) prev->next = v->next;
  else array->child = v->next;
  if (array->last == v) array->last = prev;
  v->next = NULL;
  return v;
}

void tj_free(tj *v) {
  if (v == NULL) return;
  for (tj *k = v->child, *next; k != NULL; k = next) {
    next = k->next;
    tj_free(k);
  }
  free(v->string);
  free(v->key);
  free(v);
}

static tj *copy_one(const tj *v) {
  tj *c = node(v->type);
  c->number = v->number;
  if (v->string) {
    c->string = copy_bytes(v->string, v->len);
    c->len = v->len;
  }
  if (v->key) c->key = copy_bytes(v->key, strlen(v->key));
  for (const tj *k = v->child; k != NULL; k = k->next) append(c, copy_one(k));
  return c;
}

tj *tj_copy(const tj *v) { return v ? copy_one(v) : NULL; }

/* ---- reading ---- */

tj *tj_get(const tj *object, const char *key) {
  if (object == NULL || object->type != TJ_OBJECT || key == NULL) return NULL;
  for (tj *k = object->child; k != NULL; k = k->next) {
    if (strcmp(k->key, key) == 0) return k;
  }
  return NULL;
}

tj *tj_at(const tj *container, int i) {
  if (container == NULL || i < 0) return NULL;
  tj *k = container->child;
  for (; k != NULL && i > 0; i--) k = k->next;
  return k;
}

int tj_size(const tj *container) {
  int n = 0;
  for (const tj *k = container ? container->child : NULL; k != NULL; k = k->next) n++;
  return n;
}

tj *tj_first(const tj *container) { return container ? container->child : NULL; }
tj *tj_next(const tj *v) { return v ? v->next : NULL; }
int tj_is(const tj *v, tj_type type) { return v != NULL && v->type == type; }
const char *tj_str(const tj *v) { return tj_is(v, TJ_STRING) ? v->string : NULL; }
double tj_num(const tj *v) { return tj_is(v, TJ_NUMBER) ? v->number : NAN; }

void tj_set_number(tj *v, double d) {
  if (tj_is(v, TJ_NUMBER)) v->number = d;
}

/* Equal within one rounding step: an expected number comes from a scenario's text and the
 * actual one from the library's, and two spellings of one value may round apart. */
static int same_number(double a, double b) {
  double most = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  return fabs(a - b) <= most * DBL_EPSILON;
}

int tj_equal(const tj *a, const tj *b) {
  if (a == NULL || b == NULL) return a == b;
  if (a->type != b->type) return 0;
  switch (a->type) {
    case TJ_NUMBER:
      return same_number(a->number, b->number);
    case TJ_STRING:
      return a->len == b->len && memcmp(a->string, b->string, a->len) == 0;
    case TJ_ARRAY: {
      const tj *x = a->child, *y = b->child;
      for (; x != NULL && y != NULL; x = x->next, y = y->next) {
        if (!tj_equal(x, y)) return 0;
      }
      return x == NULL && y == NULL;
    }
    case TJ_OBJECT:
      for (const tj *x = a->child; x != NULL; x = x->next) {
        if (!tj_equal(x, tj_get(b, x->key))) return 0;
      }
      for (const tj *y = b->child; y != NULL; y = y->next) {
        if (tj_get(a, y->key) == NULL) return 0;
      }
      return 1;
    default:
      return 1;
  }
}

/* ---- printing ---- */

typedef struct {
  char *data;
  size_t len, cap;
} buf_t;

static void put(buf_t *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->len + n + 1 > cap) cap *= 2;
    char *grown = realloc(b->data, cap);
    if (grown == NULL) {
      fputs("json.c: out of memory\n", stderr);
      abort();
    }
    b->data = grown;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

static void puts_(buf_t *b, const char *s) { put(b, s, strlen(s)); }

static void print_string(buf_t *b, const char *s, size_t n) {
  put(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[8];
    switch (c) {
      case '"': puts_(b, "\\\""); break;
      case '\\': puts_(b, "\\\\"); break;
      case '\b': puts_(b, "\\b"); break;
      case '\f': puts_(b, "\\f"); break;
      case '\n': puts_(b, "\\n"); break;
      case '\r': puts_(b, "\\r"); break;
      case '\t': puts_(b, "\\t"); break;
      default:
        if (c < 0x20) {
          snprintf(esc, sizeof esc, "\\u%04x", c);
          puts_(b, esc);
        } else {
          put(b, (const char *)&s[i], 1);
        }
    }
  }
  put(b, "\"", 1);
}

static void print_number(buf_t *b, double d) {
  char text[40];
  if (!isfinite(d)) {
    puts_(b, "null"); /* JSON has no NaN or infinity */
    return;
  }
  if (d == 0) {
    puts_(b, "0");
    return;
  }
  if (d == floor(d) && fabs(d) < 1e15) {
    snprintf(text, sizeof text, "%.0f", d);
  } else {
    snprintf(text, sizeof text, "%.15g", d);
    if (strtod(text, NULL) != d) snprintf(text, sizeof text, "%.17g", d);
  }
  puts_(b, text);
}

static void newline(buf_t *b, int pretty, int depth) {
  if (!pretty) return;
  put(b, "\n", 1);
  for (int i = 0; i < depth; i++) put(b, "  ", 2);
}

static void print_value(buf_t *b, const tj *v, int pretty, int depth) {
  switch (v->type) {
    case TJ_NULL: puts_(b, "null"); break;
    case TJ_FALSE: puts_(b, "false"); break;
    case TJ_TRUE: puts_(b, "true"); break;
    case TJ_NUMBER: print_number(b, v->number); break;
    case TJ_STRING: print_string(b, v->string, v->len); break;
    case TJ_ARRAY:
    case TJ_OBJECT: {
      int object = v->type == TJ_OBJECT;
      put(b, object ? "{" : "[", 1);
      for (const tj *k = v->child; k != NULL; k = k->next) {
        newline(b, pretty, depth + 1);
        if (object) {
          print_string(b, k->key, strlen(k->key));
          puts_(b, pretty ? ": " : ":");
        }
        print_value(b, k, pretty, depth + 1);
        if (k->next) put(b, ",", 1);
      }
      if (v->child) newline(b, pretty, depth);
      put(b, object ? "}" : "]", 1);
      break;
    }
  }
}

static char *print(const tj *v, int pretty) {
  if (v == NULL) return NULL;
  buf_t b = {NULL, 0, 0};
  print_value(&b, v, pretty, 0);
  return b.data;
}

char *tj_print(const tj *v) { return print(v, 0); }
char *tj_print_pretty(const tj *v) { return print(v, 1); }

/* ---- parsing ---- */

typedef struct {
  const char *p;
  int depth;
} parser_t;

static void skip_space(parser_t *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static int hex4(const char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return 0;
  }
  *out = v;
  return 1;
}

static void put_utf8(buf_t *b, unsigned cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xC0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xE0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    u[0] = (char)(0xF0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  put(b, u, n);
}

/* A "\uXXXX" escape (a surrogate pair taking two) at ps->p, just past the backslash-u. */
static int parse_escape_u(parser_t *ps, buf_t *b) {
  unsigned cp, low;
  if (!hex4(ps->p, &cp)) return 0;
  ps->p += 4;
  if (cp >= 0xDC00 && cp <= 0xDFFF) return 0; /* a low surrogate alone */
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (ps->p[0] != '\\' || ps->p[1] != 'u' || !hex4(ps->p + 2, &low) || low < 0xDC00 || low > 0xDFFF) return 0;
    ps->p += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  put_utf8(b, cp);
  return 1;
}

/* The string at ps->p (on its opening quote) into `b`; 0 if malformed. */
static int parse_string(parser_t *ps, buf_t *b) {
  ps->p++;
  put(b, "", 0); /* an empty string still gets its NUL */
  for (;;) {
    unsigned char c = (unsigned char)*ps->p;
    if (c == '"') {
      ps->p++;
      return 1;
    }
    if (c < 0x20) return 0; /* the end of the text, or a raw control character */
    if (c != '\\') {
      const char *run = ps->p;
      while ((unsigned char)*ps->p >= 0x20 && *ps->p != '"' && *ps->p != '\\') ps->p++;
      put(b, run, (size_t)(ps->p - run));
      continue;
    }
    ps->p++;
    const char *plain = NULL;
    switch (*ps->p++) {
      case '"': plain = "\""; break;
      case '\\': plain = "\\"; break;
      case '/': plain = "/"; break;
      case 'b': plain = "\b"; break;
      case 'f': plain = "\f"; break;
      case 'n': plain = "\n"; break;
      case 'r': plain = "\r"; break;
      case 't': plain = "\t"; break;
      case 'u':
        if (!parse_escape_u(ps, b)) return 0;
        break;
      default:
        return 0;
    }
    if (plain) put(b, plain, 1);
  }
}

static int digits(parser_t *ps) {
  const char *start = ps->p;
  while (*ps->p >= '0' && *ps->p <= '9') ps->p++;
  return ps->p > start;
}

static tj *parse_number(parser_t *ps) {
  const char *start = ps->p;
  if (*ps->p == '-') ps->p++;
  if (*ps->p == '0') ps->p++;
  else if (!digits(ps)) return NULL;
  if (*ps->p == '.') {
    ps->p++;
    if (!digits(ps)) return NULL;
  }
  if (*ps->p == 'e' || *ps->p == 'E') {
    ps->p++;
    if (*ps->p == '+' || *ps->p == '-') ps->p++;
    if (!digits(ps)) return NULL;
  }
  char text[64];
  size_t n = (size_t)(ps->p - start);
  if (n >= sizeof text) { /* past any double's precision; strtod still wants a terminated copy */
    char *long_text = copy_bytes(start, n);
    tj *v = tj_number(strtod(long_text, NULL));
    free(long_text);
    return v;
  }
  memcpy(text, start, n);
  text[n] = 0;
  return tj_number(strtod(text, NULL));
}

static tj *parse_value(parser_t *ps);

static tj *parse_container(parser_t *ps, int object) {
  char close = object ? '}' : ']';
  if (++ps->depth > TJ_MAX_DEPTH) return NULL;
  tj *v = node(object ? TJ_OBJECT : TJ_ARRAY);
  ps->p++;
  skip_space(ps);
  if (*ps->p == close) {
    ps->p++;
    ps->depth--;
    return v;
  }
  for (;;) {
    skip_space(ps);
    char *key = NULL;
    if (object) {
      buf_t k = {NULL, 0, 0};
      if (*ps->p != '"' || !parse_string(ps, &k)) {
        free(k.data);
        break;
      }
      key = k.data;
      skip_space(ps);
      if (*ps->p != ':') {
        free(key);
        break;
      }
      ps->p++;
    }
    tj *item = parse_value(ps);
    if (item == NULL) {
      free(key);
      break;
    }
    item->key = key;
    append(v, item);
    skip_space(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == close) {
      ps->p++;
      ps->depth--;
      return v;
    }
    break;
  }
  tj_free(v);
  return NULL;
}

static tj *parse_value(parser_t *ps) {
  skip_space(ps);
  const char *p = ps->p;
  switch (*p) {
    case '{': return parse_container(ps, 1);
    case '[': return parse_container(ps, 0);
    case '"': {
      buf_t b = {NULL, 0, 0};
      if (!parse_string(ps, &b)) {
        free(b.data);
        return NULL;
      }
      tj *v = node(TJ_STRING);
      v->string = b.data;
      v->len = b.len;
      return v;
    }
    case 't':
      if (strncmp(p, "true", 4) != 0) return NULL;
      ps->p += 4;
      return node(TJ_TRUE);
    case 'f':
      if (strncmp(p, "false", 5) != 0) return NULL;
      ps->p += 5;
      return node(TJ_FALSE);
    case 'n':
      if (strncmp(p, "null", 4) != 0) return NULL;
      ps->p += 4;
      return node(TJ_NULL);
    default:
      return parse_number(ps);
  }
}

tj *tj_parse(const char *text) {
  if (text == NULL) return NULL;
  parser_t ps = {text, 0};
  tj *v = parse_value(&ps);
  skip_space(&ps);
  if (v != NULL && *ps.p != 0) { /* trailing text: not one JSON value */
    tj_free(v);
    return NULL;
  }
  return v;
}
