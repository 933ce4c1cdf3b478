/** EX_CONFIG from sysexits.h: the exit code of every error whose code is marked `operator`. */
export const EX_CONFIG = 78
