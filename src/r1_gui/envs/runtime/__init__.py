"""Where environments run, written once for every backend: side by side in worker processes of this machine
(`pool.EnvPool`, `worker`), as Ray actors on a cluster (`ray_pool.RayEnvPool`), the one a command's flags pick
(`backend.make_pool`), and the process trees they leave to end (`processes`)."""
