// world.asl: the plan library of a shared world's agent (bdi_rl/bdi/world.py).
//
// The world agent hosts the world its seated learners step together and traces every joint
// step (world.step events); it has no goals of its own. Any agent of the experiment may ask
// it where the world is:  .send(World, askOne, world(Env, Episodes, Steps), Answer)
//   Env        the world's env id
//   Episodes   joint episodes begun
//   Steps      joint steps taken

@where
+?world(Env, Episodes, Steps) <- .world_info(I); I = [Env, Episodes, Steps].
