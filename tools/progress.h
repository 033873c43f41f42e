/* progress.h -- a progress line on stderr for long CLI steps.  Nothing is
 * drawn unless stderr is a terminal and the step has run for more than about
 * a second, so quick runs and redirected output stay clean; stdout is never
 * touched.  One step at a time. */
#ifndef ADIA_PROGRESS_H
#define ADIA_PROGRESS_H

/* Start a step named what (kept by pointer: must outlive the step). */
void progress_begin(const char *what);
/* Report the fraction done, in [0, 1]; redrawn at most ~10 times a second. */
void progress_update(double fraction);
/* End the step: clears the line if one was drawn. */
void progress_end(void);
/* progress_update as a library callback (adia_spy_options.progress). */
void progress_callback(double fraction, void *user);

#endif
