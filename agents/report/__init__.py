"""The ReACT report agent (`--writer react`): after the research, it writes each section in a
think → tool call → observe loop over four tools, and the run's personas stay interviewable."""
