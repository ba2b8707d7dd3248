# An AMI set up and gated by neurondoctor. The build instance may have no Neuron device (a c7i is cheaper than a
# trn1), so both steps use --image: packages, hold, venv and their check, without the device, loaded-driver and
# hardware checks. The build fails when the gate's verdict is not ok or degraded (exit 1 unhealthy, 3 unknown).
# The instance that boots the AMI confirms the rest (driver, devices, canary) with deploy/bootstrap's unit.
#
# With the amazon-chroot builder instead, gate the mounted image from the build host with a "shell-local"
# provisioner: neurondoctor bootstrap --image --release 2.33.0 --venv /opt/aws_neuron_venv_pytorch --root <mount_path>
# (and leave the DKMS build to the first boot: inside a chroot `uname -r` is the build host's kernel).
source "amazon-ebs" "neuron" {
  ami_name      = "neuron-2.33.0-{{timestamp}}"
  instance_type = "c7i.xlarge"
  region        = "us-east-1"
  ssh_username  = "ubuntu"
  source_ami_filter {
    filters     = { name = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*" }
    owners      = ["099720109477"]
    most_recent = true
  }
}

build {
  sources = ["source.amazon-ebs.neuron"]

  provisioner "shell" {
    environment_vars = ["NEURONDOCTOR_WHEEL=${var.neurondoctor_wheel}"]
    inline = [
      "curl -LsSf https://astral.sh/uv/install.sh | sudo env UV_INSTALL_DIR=/usr/local/bin sh",
      "sudo env UV_TOOL_DIR=/opt/uv-tools UV_TOOL_BIN_DIR=/usr/local/bin uv tool install \"$NEURONDOCTOR_WHEEL\"",
      "sudo neurondoctor bootstrap --image --release 2.33.0 --venv /opt/aws_neuron_venv_pytorch --apply",
    ]
  }

  # the gate: plans again (nothing left to do on a good image) and exits with the verdict
  provisioner "shell" {
    inline = ["sudo neurondoctor bootstrap --image --release 2.33.0 --venv /opt/aws_neuron_venv_pytorch --json"]
  }
}

variable "neurondoctor_wheel" {
  type        = string
  description = "Where the neurondoctor wheel is (a URL or a path on the build instance)."
}
