// Does nothing: the start-up baseline (`node -e 0`, but through the same preload as the CLI runs).
