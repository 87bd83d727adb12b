/* Making arbitrary bytes safe: segment names may hold newlines, escape
 * sequences and invalid UTF-8, and must never reach a terminal or a JSON
 * document raw. */
#ifndef SHMWATCH_ESCAPE_H
#define SHMWATCH_ESCAPE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 if the
 * bytes there are not valid UTF-8 (overlong, surrogate, truncated...). */
size_t utf8_valid_len(const unsigned char *s, size_t n);

/* Whether the valid UTF-8 character of len bytes (len >= 2) at s may be
 * shown as it is: not a C1 control (U+0080..U+009F, an escape introducer
 * on some terminals), nor a character drawn as nothing or reordering what
 * is around it (bidirectional overrides, zero-width spaces, the byte order
 * mark: one name could pass for another). */
bool utf8_char_shown(const unsigned char *s, size_t len);

/* The largest cut at or before byte len of s that is not inside a UTF-8
 * character (len itself unless s[len] continues one). */
size_t utf8_cut(const char *s, size_t len);

/* The largest cut at or before byte len of s, text that esc_term wrote,
 * that is inside neither a character nor an escape (\xff, \u{202e}). */
size_t esc_term_cut(const char *s, size_t len);

/* vsnprintf into dst (size > 0), but text too long for it is cut at a
 * character boundary (utf8_cut), not inside a UTF-8 character. */
void utf8_vsnprintf(char *dst, size_t size, const char *fmt, va_list ap);

/* Appends s as a JSON string literal, quotes included: control characters
 * (C1 too) and characters that are not utf8_char_shown escaped as \uXXXX,
 * invalid UTF-8 replaced by U+FFFD. */
void esc_json(struct buf *out, const char *s);

/* Appends s for display on a terminal: control bytes as \n, \t, \e, \xNN,
 * invalid UTF-8 bytes as \xNN, a backslash as \\, a character that is not
 * utf8_char_shown as \u{...}, and so a character that a terminal draws
 * over the cell before (a combining mark: "\u0301x" would pass for an
 * accent on what precedes the name) where a name begins: first, after a
 * space or a '/' ("NAMESPACE/NAME", a path, a sentence), after an escape;
 * other valid UTF-8 as is.
 * With ascii set, every non-ASCII character is also written as \u{...}. */
void esc_term(struct buf *out, const char *s, int ascii);

/* esc_term of s as a new string (malloc'd): for putting text that came from
 * outside (an argument, a file name) into a one-line message. */
char *esc_term_dup(const char *s);

#endif
