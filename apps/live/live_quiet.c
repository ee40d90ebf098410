#include "live_quiet.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int pnl_stderr_mute(void)
{
    fflush(stderr);
    const int saved = dup(STDERR_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (saved < 0 || null < 0 || dup2(null, STDERR_FILENO) < 0) {
        if (saved >= 0)
            close(saved);
        if (null >= 0)
            close(null);
        return -1;
    }
    close(null);
    return saved;
}

void pnl_stderr_restore(int saved)
{
    if (saved < 0)
        return;
    dup2(saved, STDERR_FILENO);
    close(saved);
}
