# The VM suite's job: an exec task with memory, CPU and pids limits that runs
# until stopped, and one that outgrows its memory.
job "limits" {
  type = "service"
  group "web" {
    task "sleeper" {
      driver = "exec"
      config {
        command    = "/bin/sleep"
        args       = ["3600"]
        pids_limit = 64
      }
      resources {
        cpu    = 200
        memory = 64
      }
    }
  }
  group "hungry" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "eat" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "x=a; while true; do x=$x$x$x$x; done"]
      }
      resources {
        memory     = 16
        memory_max = 16
      }
    }
  }
}
