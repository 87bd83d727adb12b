/* The cells of the list: its columns, the text of each cell of a row, and
 * the colours rows and cells are drawn in. list.c lays the columns out. */
#ifndef SHMWATCH_UI_CELLS_H
#define SHMWATCH_UI_CELLS_H

#include <stdbool.h>
#include <stddef.h>

#include "config/theme.h"
#include "ui/ui_priv.h"

enum col_id {
    /* Segment columns, in enum config_column order (layout() relies on it). */
    C_NAME,
    C_STATE,
    C_KIND,
    C_SIZE,
    C_ALLOC,
    C_HOLDERS,
    C_AGE,
    C_PID,
    C_GROUP,
    /* Process view. */
    P_PID,
    P_PPID,
    P_STATE,
    P_ROLE,
    P_GROUP,
    P_SHM,
    P_SEGS,
    P_RSS,
    P_CMD,
    NCOLS
};

struct coldef {
    const char *title;
    int width; /* 0: takes the rest */
    bool right;
    int sort; /* the sort key it shows, or -1 */
};
extern const struct coldef cols[NCOLS];

/* The name (or command) cell of a row, escaped. */
void cell_name(const struct ui *u, const struct row *r, char *dst, size_t n);
/* Any other cell; *role is set when the cell has its own colour. */
void cell_text(const struct ui *u, const struct row *r, enum col_id c, char *dst, size_t n,
               enum theme_role *role);
/* The colour of a row as a whole. */
enum theme_role cell_row_colour(const struct row *r);

#endif
