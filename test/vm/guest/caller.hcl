# A task that calls the agent's API over TCP, as any process on the host could:
# the agent must tell it from the operator and refuse it. (%%{ is HCL's escape
# for curl's %{.)
job "caller" {
  type = "service"
  group "g" {
    task "curl" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "curl -s -o /dev/null -w 'api answered %%{http_code}\\n' http://127.0.0.1:4646/v1/jobs; exec sleep 3600"]
      }
    }
  }
}
