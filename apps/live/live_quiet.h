/* Keeps a library's start-up chatter off stderr: PortAudio and PortMidi
 * both print ALSA's probing there, which the app reports better itself. */
#ifndef PARNASSUS_LIVE_QUIET_H
#define PARNASSUS_LIVE_QUIET_H

/* Points stderr at /dev/null; returns what restores it (-1: nothing done). */
int pnl_stderr_mute(void);
void pnl_stderr_restore(int saved);

#endif
