#include "parnassus/path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver_internal.h"

void pn_path_settings_default(pn_path_settings *s)
{
    pn_settings_default(&s->solver);
    /* the path searches on its own (continuation, sweeps, a search at the
     * low end): its two cold solves need few random restarts */
    s->solver.restarts = 2;
    s->step = 0.25;
    s->floor = -14.0;
    s->ceiling = 24.0;
    s->norm_tol = 1e-3;
    s->stable_points = 12;
    s->sweeps = 4;
}

/* A point under construction: its weights are kept so that neighbours can
 * start from them. */
typedef struct slot {
    double x;
    double *w;
    double objective;
    pn_info info;
    double *group_norm, *rule_error;
    unsigned char *selected;
    int version; /* bumped whenever the stored solution changes */
    int seen[2]; /* versions of the left/right neighbour last tried */
} slot;

typedef struct path_builder {
    pn_solver *solver;
    const pn_problem *prob;
    pn_settings settings;
    slot *slots;
    int count, capacity;
    int alternations;
} path_builder;

static void free_slot(slot *s)
{
    free(s->w);
    free(s->group_norm);
    free(s->rule_error);
    free(s->selected);
}

static slot *new_slot(path_builder *pb, double x)
{
    if (pb->count == pb->capacity) {
        int cap = pb->capacity ? 2 * pb->capacity : 64;
        slot *grown = realloc(pb->slots, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        pb->slots = grown;
        pb->capacity = cap;
    }
    const size_t m = (size_t)pb->prob->num_rows, K = (size_t)pb->prob->num_rules;
    slot *s = &pb->slots[pb->count];
    memset(s, 0, sizeof *s);
    s->x = x;
    s->seen[0] = s->seen[1] = -1;
    s->w = malloc(m * sizeof *s->w);
    s->group_norm = malloc(K * sizeof *s->group_norm);
    s->rule_error = malloc(K * sizeof *s->rule_error);
    s->selected = malloc(K);
    if (!s->w || !s->group_norm || !s->rule_error || !s->selected) {
        free_slot(s);
        return NULL;
    }
    pb->count++;
    return s;
}

static void store(path_builder *pb, slot *s, const pn_info *info)
{
    const pn_solver *solver = pb->solver;
    memcpy(s->w, pn_solver_w(solver), (size_t)pb->prob->num_rows * sizeof *s->w);
    s->info = *info;
    s->objective = info->objective;
    s->version++;
    pn_solver_rule_stats(solver, s->group_norm, s->rule_error, s->selected);
}

static pn_error set_x(path_builder *pb, double x, pn_error_info *info)
{
    pb->settings.log2_lambda_w = x;
    return pn_solver_update_settings(pb->solver, &pb->settings, info);
}

static int converged_norms(const path_builder *pb, const slot *s, double tol)
{
    const pn_problem *p = pb->prob;
    for (int32_t r = 0; r < p->num_rules; ++r) {
        double limit = sqrt((double)pn_rule_size(p, r)) / p->num_rows;
        if (fabs(s->group_norm[r] - limit) > tol * limit)
            return 0;
    }
    return 1;
}

static int same_selection(const slot *a, const slot *b, int32_t K)
{
    return memcmp(a->selected, b->selected, (size_t)K) == 0;
}

/* Tries the weights of slot i's neighbours as starting points at slot i's
 * lambda_w and keeps whatever beats the stored objective. Returns whether
 * the slot improved. */
static int improve(path_builder *pb, int i, pn_error_info *err, pn_error *e)
{
    slot *s = &pb->slots[i];
    int improved = 0;
    for (int d = -1; d <= 1; d += 2) {
        int j = i + d;
        if (j < 0 || j >= pb->count)
            continue;
        int *seen = &s->seen[d > 0];
        if (*seen == pb->slots[j].version || same_selection(&pb->slots[j], s, pb->prob->num_rules))
            continue; /* nothing new next door */
        *seen = pb->slots[j].version;
        if ((*e = set_x(pb, s->x, err)) != PN_OK)
            return 0;
        pn_solver_forget_best(pb->solver);
        pn_run run;
        if (pn_solver_run_from(pb->solver, pb->slots[j].w, &run) < 0) {
            *e = pn_solver_failure(pb->solver, err);
            return 0;
        }
        pb->alternations += run.alternations;
        if (run.objective < s->objective * (1.0 - 1e-12)) {
            pn_info info;
            pn_solver_best_info(pb->solver, &info);
            store(pb, s, &info);
            improved = 1;
        }
    }
    return improved;
}

/* A cold solve (with its search) at slot i; keeps it if better. */
static pn_error search_at(path_builder *pb, int i, pn_error_info *err)
{
    slot *s = &pb->slots[i];
    pn_error e = set_x(pb, s->x, err);
    if (e != PN_OK)
        return e;
    pn_info info;
    e = pn_solver_solve(pb->solver, PN_START_COLD, &info, err);
    if (e != PN_OK)
        return e;
    pb->alternations += info.alternations;
    if (info.objective < s->objective * (1.0 - 1e-12))
        store(pb, s, &info);
    return PN_OK;
}

static int by_x(const void *a, const void *b)
{
    double x = ((const slot *)a)->x, y = ((const slot *)b)->x;
    return (x > y) - (x < y);
}

static pn_error grow(path_builder *pb, const pn_path_settings *ps, double direction,
                     pn_error_info *err)
{
    const int32_t K = pb->prob->num_rules;
    int stable = 0;
    int from = 0; /* slot of the start point */
    for (int k = 1;; ++k) {
        double x = direction * ps->step * k;
        if (x < ps->floor - 1e-12 || x > ps->ceiling + 1e-12)
            break;
        pn_error e = set_x(pb, x, err);
        if (e != PN_OK)
            return e;
        /* warm start from the previous point */
        pn_solver_forget_best(pb->solver);
        pn_run run;
        if (pn_solver_run_from(pb->solver, pb->slots[from].w, &run) < 0)
            return pn_solver_failure(pb->solver, err);
        pb->alternations += run.alternations;
        pn_info info;
        pn_solver_best_info(pb->solver, &info);
        slot *s = new_slot(pb, x);
        if (!s)
            return pn_fail(err, PN_ERR_NOMEM, "out of memory");
        store(pb, s, &info);
        const slot *prev = &pb->slots[from];
        from = pb->count - 1;
        if (direction < 0) {
            if (!info.group_selective)
                break; /* Theorem 1: below this w* is no longer group selective */
            double d_err = fabs(s->info.weighted_error - prev->info.weighted_error);
            int same = same_selection(s, prev, K) &&
                       d_err <= 1e-3 * fmax(prev->info.weighted_error, 1e-300) + 1e-15;
            stable = same ? stable + 1 : 0;
            if (stable >= ps->stable_points)
                break;
        } else if (converged_norms(pb, s, ps->norm_tol)) {
            break; /* Theorem 1: |w_r| -> sqrt(m_r)/m */
        }
    }
    return PN_OK;
}

pn_error pn_path_compute(const pn_problem *prob, const pn_path_settings *ps, pn_path **out,
                         pn_error_info *err)
{
    *out = NULL;
    if (!(ps->step > 0.0) || !(ps->floor <= 0.0) || !(ps->ceiling >= 0.0) ||
        !(ps->norm_tol > 0.0) || ps->stable_points < 1 || ps->sweeps < 0)
        return pn_fail(err, PN_ERR_INVALID, "path settings out of range");
    path_builder pb = {0};
    pb.prob = prob;
    pb.settings = ps->solver;
    pb.settings.log2_lambda_w = 0.0;
    pn_error e = pn_solver_create(prob, &pb.settings, &pb.solver, err);
    if (e != PN_OK)
        return e;
    pn_path *path = NULL;
    /* the centre point, lambda_w = 1, with restarts */
    pn_info info;
    e = pn_solver_solve(pb.solver, PN_START_COLD, &info, err);
    if (e != PN_OK)
        goto done;
    pb.alternations += info.alternations;
    slot *centre = new_slot(&pb, 0.0);
    if (!centre) {
        e = pn_fail(err, PN_ERR_NOMEM, "out of memory");
        goto done;
    }
    store(&pb, centre, &info);
    e = grow(&pb, ps, -1.0, err);
    if (e == PN_OK)
        e = grow(&pb, ps, +1.0, err);
    if (e != PN_OK)
        goto done;
    qsort(pb.slots, (size_t)pb.count, sizeof *pb.slots, by_x);
    /* the low end is where the selection is most combinatorial (Theorem 2):
     * search there too, then let better selections spread along the path */
    e = search_at(&pb, 0, err);
    for (int sweep = 0; sweep < ps->sweeps && e == PN_OK; ++sweep) {
        int changed = 0;
        for (int i = 1; i < pb.count && e == PN_OK; ++i)
            changed |= improve(&pb, i, err, &e);
        for (int i = pb.count - 2; i >= 0 && e == PN_OK; --i)
            changed |= improve(&pb, i, err, &e);
        if (!changed)
            break;
    }
    if (e != PN_OK)
        goto done;

    path = calloc(1, sizeof *path);
    if (!path) {
        e = pn_fail(err, PN_ERR_NOMEM, "out of memory");
        goto done;
    }
    path->num_rules = prob->num_rules;
    path->alpha = ps->solver.alpha;
    path->lambda_p = ps->solver.lambda_p;
    path->total_alternations = pb.alternations;
    path->points = calloc((size_t)pb.count, sizeof *path->points);
    if (!path->points) {
        free(path);
        path = NULL;
        e = pn_fail(err, PN_ERR_NOMEM, "out of memory");
        goto done;
    }
    path->num_points = pb.count;
    for (int i = 0; i < pb.count; ++i) {
        slot *s = &pb.slots[i];
        pn_path_point *p = &path->points[i];
        p->log2_lambda_w = s->x;
        p->objective = s->info.objective;
        p->weighted_error = s->info.weighted_error;
        p->num_selected = s->info.num_selected;
        p->group_selective = s->info.group_selective;
        /* hand the per-rule arrays over */
        p->group_norm = s->group_norm;
        p->rule_error = s->rule_error;
        p->selected = s->selected;
        s->group_norm = NULL;
        s->rule_error = NULL;
        s->selected = NULL;
    }
done:
    for (int i = 0; i < pb.count; ++i)
        free_slot(&pb.slots[i]);
    free(pb.slots);
    pn_solver_free(pb.solver);
    *out = path;
    return e;
}

void pn_path_free(pn_path *path)
{
    if (!path)
        return;
    for (int i = 0; i < path->num_points; ++i) {
        free(path->points[i].group_norm);
        free(path->points[i].rule_error);
        free(path->points[i].selected);
    }
    free(path->points);
    free(path);
}
