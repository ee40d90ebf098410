/* parnassus-bench: guarded cold solves and warm series (bench_solve.h). */
#define _POSIX_C_SOURCE 200809L

#include "bench_solve.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int guarded_cold_solve(const pn_problem *prob, const pn_settings *s, double limit,
                       guarded_result *res)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        guarded_result r;
        memset(&r, 0, sizeof r);
        pn_error_info info = {0};
        pn_solver *solver = NULL;
        r.error = pn_solver_create(prob, s, &solver, &info) != PN_OK;
        if (!r.error) {
            r.error = pn_solver_solve(solver, PN_START_COLD, &r.info, &info) != PN_OK;
            r.seconds = r.info.solve_time;
        }
        ssize_t w = write(fd[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    int outcome = -1;
    struct pollfd p = {fd[0], POLLIN, 0};
    double deadline = now() + limit;
    for (;;) {
        double left = deadline - now();
        if (left <= 0.0) {
            outcome = 1;
            break;
        }
        int rc = poll(&p, 1, (int)(left * 1e3) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0) {
            outcome = rc == 0 ? 1 : -1;
            break;
        }
        ssize_t got = read(fd[0], res, sizeof *res);
        outcome = got == (ssize_t)sizeof *res && !res->error ? 0 : -1;
        break;
    }
    if (outcome != 0) /* stopped, or something went wrong: do not wait for it */
        kill(pid, SIGKILL);
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return outcome;
}

void warm_settings_series(pn_solver *solver, const pn_settings *there, const pn_settings *back,
                          int runs, double budget, int num_rules, samples *sm, solve_stats *st)
{
    pn_error_info info = {0};
    pn_info out;
    double spent = 0.0;
    for (int i = 0; i < runs; ++i) {
        if (budget > 0.0 && i > 0 && spent > budget) {
            runs = i;
            break;
        }
        stopwatch sw = start_timer();
        check(pn_solver_update_settings(solver, i % 2 ? back : there, &info), &info,
              "pn_solver_update_settings");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
        stop_timer_at(&sw, sm, out.update_time + out.solve_time);
        spent += sm->v[sm->n - 1];
        stats_add(st, &out, num_rules);
    }
    if (runs % 2) {
        check(pn_solver_update_settings(solver, back, &info), &info, "pn_solver_update_settings");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
    }
}

void warm_targets_series(pn_solver *solver, const double *there, const double *back, int runs,
                         int num_rules, samples *sm, solve_stats *st)
{
    pn_error_info info = {0};
    pn_info out;
    for (int i = 0; i < runs; ++i) {
        stopwatch sw = start_timer();
        check(pn_solver_update_targets(solver, i % 2 ? back : there, &info), &info,
              "pn_solver_update_targets");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
        stop_timer_at(&sw, sm, out.update_time + out.solve_time);
        stats_add(st, &out, num_rules);
    }
    if (runs % 2) {
        check(pn_solver_update_targets(solver, back, &info), &info, "pn_solver_update_targets");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
    }
}
