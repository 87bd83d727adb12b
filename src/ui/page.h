/* Full-screen pages of text (help, the budget arithmetic, details of a
 * segment or process): built line by line, word-wrapped to the screen
 * width, scrolled with the usual keys. */
#ifndef SHMWATCH_UI_PAGE_H
#define SHMWATCH_UI_PAGE_H

#include <stddef.h>

#include "ui/ui_priv.h"

struct page_line {
    char *text; /* safe text */
    int role;   /* enum theme_role */
};

struct page {
    char title[160];
    int width; /* wrap width */
    struct page_line *lines;
    size_t n, cap;
};

/* Adds safe text (from this program), wrapped at the page width; the
 * continuation lines are indented by indent columns. */
void page_add(struct page *p, int role, int indent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* label (safe) followed by untrusted bytes, escaped, wrapped. */
void page_add_name(struct page *p, int role, int indent, const char *label, const char *name);
void page_blank(struct page *p);

/* info.c: the contents of the budget and details pages. */
void info_budget(struct ui *u, struct page *p);
void info_details(struct ui *u, struct page *p);
/* evlog.c: the events page. */
void evlog_page(struct ui *u, struct page *p);
/* keys.c: the help page's list of keys, from the key table. */
void keys_help_lines(struct page *p);

#endif
