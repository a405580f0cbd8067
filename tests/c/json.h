/* A small JSON value for the C tests: parse, print, compare, build and read. The tests carry
 * their own so that building them needs nothing beyond libc (no JSON package to install).
 *
 * Every reader takes NULL and answers NULL (or 0, or NAN), and the builders ignore a NULL
 * item, so lookups chain without checks: tj_str(tj_get(tj_at(tj_get(doc, "calls"), 0), "id")).
 * Strings are UTF-8 bytes, kept as given (no validation), with their length: "\u0000" survives
 * a round trip, though tj_str() then shows the string up to the NUL. */
#ifndef TN_TEST_JSON_H
#define TN_TEST_JSON_H

typedef struct tj tj;

typedef enum { TJ_NULL, TJ_FALSE, TJ_TRUE, TJ_NUMBER, TJ_STRING, TJ_ARRAY, TJ_OBJECT } tj_type;

/* A whole JSON text (RFC 8259, whitespace around it allowed), or NULL when `text` is NULL or
 * not JSON. Free the value with tj_free. */
tj *tj_parse(const char *text);

/* The value as compact JSON, or NULL for NULL; release it with free(). */
char *tj_print(const tj *v);

/* The value as indented JSON, for a person reading a failure. */
char *tj_print_pretty(const tj *v);

/* Frees a value and everything in it; NULL is ignored. */
void tj_free(tj *v);

/* A deep copy. */
tj *tj_copy(const tj *v);

/* Deep equality: object members match by key in any order, array elements in order, numbers
 * within one rounding step of each other. NULL equals only NULL. */
int tj_equal(const tj *a, const tj *b);

tj *tj_null(void);
tj *tj_bool(int b);
tj *tj_number(double d);
tj *tj_string(const char *s); /* NULL for NULL, so a missing string adds nothing */
tj *tj_array(void);
tj *tj_object(void);

/* Appends `item` to `object` under `key` (an existing member with that key stays: keys are
 * not replaced) and returns it; the container owns it from now on. A NULL item is ignored;
 * an item given to a NULL or non-object container is freed. */
tj *tj_add(tj *object, const char *key, tj *item);

/* Appends `item` to `array`, as tj_add does to an object. */
tj *tj_push(tj *array, tj *item);

/* Removes element `i` of `array` and hands it to the caller, or NULL when there is none. */
tj *tj_take(tj *array, int i);

/* The first member of `object` named `key` (case-sensitive), or NULL. */
tj *tj_get(const tj *object, const char *key);

/* Element `i` of an array (or member `i` of an object), or NULL. */
tj *tj_at(const tj *container, int i);

/* The number of elements or members; 0 for anything else. */
int tj_size(const tj *container);

/* Walks a container: for (it = tj_first(c); it; it = tj_next(it)). */
tj *tj_first(const tj *container);
tj *tj_next(const tj *v);
#define tj_each(it, container) for ((it) = tj_first(container); (it) != NULL; (it) = tj_next(it))

int tj_is(const tj *v, tj_type type); /* 0 for NULL */
const char *tj_str(const tj *v);      /* NULL unless a string */
double tj_num(const tj *v);           /* NAN unless a number */
void tj_set_number(tj *v, double d);  /* only on a number */

#endif
